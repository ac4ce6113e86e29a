//! Board management: `POST /leaderboards`, `GET /leaderboards`, `GET /leaderboards/{lb}`,
//! `PATCH /leaderboards/{lb}`, `POST /families`, `GET /families/{game}/{mode}`, and the
//! reads of sealed windows: `GET /leaderboards/{lb}/results`,
//! `GET /games/{game}/modes/{mode}/players/{p}/history`; and the event sources' schema
//! mappings (server-only): `PUT` / `GET /admin/mappings/{source}`; the rank index as the
//! console shows it (server-only): `GET /admin/index?leaderboard_id=`; and stream
//! ingest's dead letters waiting (server-only): `GET /admin/dead-letters`.
//! Creates answer 201, or 200 when the same settings already exist.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::cursor::CursorSigner;
use leaderboard::error::DomainError;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::ServiceError;
use leaderboard::service::boards::{self, Created, ListQuery, PatchBoard};
use leaderboard::service::cache_plane;
use leaderboard::service::mappings;
use leaderboard::service::moderation::Operator;
use leaderboard::service::seal::{self, HistoryRequest};
use leaderboard::store::{CachePlane, DeadLetters, RankIndex, ScoreStore};
use serde::Serialize;

#[cfg(test)]
mod tests;

pub struct Deps<S, I, P, D> {
    pub store: S,
    /// Marks a new board's index complete; answers a board's index health.
    pub index: I,
    pub signer: CursorSigner,
    /// The rank index's control plane, when the deployment names its replication group.
    pub plane: Option<P>,
    /// Stream ingest's dead-letter queue, whose counts the console shows.
    pub dead_letters: Option<D>,
}

fn created<T: Serialize>(result: Result<Created<T>, ServiceError>) -> Response {
    match result {
        Ok(Created::New(v)) => http::json(201, &v),
        Ok(Created::Existing(v)) => http::json(200, &v),
        Err(e) => http::error_response(&e),
    }
}

pub async fn handle<S: ScoreStore, I: RankIndex, P: CachePlane, D: DeadLetters>(
    deps: &Deps<S, I, P, D>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let store = &deps.store;
    let lb = || http::path(req, "lb", LeaderboardId::parse);
    let source = || req.path_parameters.get("source").map_or("", String::as_str);
    http::routed(&event, async |req, route| match route {
        "POST /leaderboards" => created(
            async { boards::create_board(store, &deps.index, http::json_body(req)?).await }.await,
        ),
        "GET /leaderboards" => {
            http::reply(200, async {
                let q = ListQuery::parse(
                    http::query(req, "game"),
                    http::query(req, "mode"),
                    http::query(req, "status"),
                    http::query(req, "limit"),
                    http::query(req, "cursor"),
                )?;
                boards::list_boards(store, &deps.signer, q).await
            })
            .await
        }
        "GET /leaderboards/{lb}" => {
            http::respond(200, async { boards::get_board(store, &lb()?).await }.await)
        }
        "PATCH /leaderboards/{lb}" => {
            http::reply(200, async {
                let patch: PatchBoard = http::json_body(req)?;
                let lb = lb()?;
                let op = Operator(http::operator(req));
                boards::change_status(store, &op, &lb, patch).await
            })
            .await
        }
        "GET /leaderboards/{lb}/results" => {
            http::respond(200, async { seal::results(store, &lb()?).await }.await)
        }
        "GET /games/{game}/modes/{mode}/players/{p}/history" => {
            http::reply(200, async {
                let param = |name: &str| req.path_parameters.get(name).map_or("", String::as_str);
                let q = HistoryRequest::parse(
                    param("game"),
                    param("mode"),
                    param("p"),
                    http::query(req, "scope"),
                    http::query(req, "period"),
                    http::query(req, "limit"),
                    http::query(req, "cursor"),
                )?;
                seal::history(store, q).await
            })
            .await
        }
        "POST /families" => {
            created(async { boards::create_family(store, http::json_body(req)?).await }.await)
        }
        "GET /families/{game}/{mode}" => {
            http::reply(200, async {
                let game = req.path_parameters.get("game").map_or("", String::as_str);
                let mode = req.path_parameters.get("mode").map_or("", String::as_str);
                boards::get_family(store, game, mode).await
            })
            .await
        }
        "PUT /admin/mappings/{source}" => match http::query(req, "dry_run") {
            None | Some("false") => created(
                async { mappings::put_mapping(store, source(), http::json_body(req)?).await }.await,
            ),
            Some("true") => http::respond(
                200,
                async { mappings::check_mapping(store, source(), http::json_body(req)?).await }
                    .await,
            ),
            Some(_) => http::respond::<()>(
                200,
                Err(DomainError::invalid("dry_run", "must be true or false").into()),
            ),
        },
        "GET /admin/mappings/{source}" => http::respond(
            200,
            mappings::get_mapping(store, source(), http::query(req, "version")).await,
        ),
        "GET /admin/dead-letters" => match &deps.dead_letters {
            Some(queue) => match queue.count().await {
                Ok(count) => http::json(200, &count),
                Err(e) => http::error_response(&ServiceError::from(e)),
            },
            None => http::error_response(&ServiceError::from(DomainError::invalid(
                "dead_letters",
                "this deployment has no dead-letter queue (DEAD_LETTER_QUEUE_URL)",
            ))),
        },
        "GET /admin/index" => {
            http::reply(200, async {
                let lb = http::query(req, "leaderboard_id")
                    .map(LeaderboardId::parse)
                    .transpose()?;
                cache_plane::index_view(store, &deps.index, deps.plane.as_ref(), lb.as_ref()).await
            })
            .await
        }
        _ => http::unknown_route(req),
    })
    .await
}
