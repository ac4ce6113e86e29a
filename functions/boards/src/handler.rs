//! Board management: `POST /leaderboards`, `GET /leaderboards`, `GET /leaderboards/{lb}`,
//! `PATCH /leaderboards/{lb}`, `POST /families`, `GET /families/{game}/{mode}`, and the
//! reads of sealed windows: `GET /leaderboards/{lb}/results`,
//! `GET /games/{game}/modes/{mode}/players/{p}/history`; and the event sources' schema
//! mappings (server-only): `PUT` / `GET /admin/mappings/{source}`; the rank index as the
//! console shows it (server-only): `GET /admin/index?leaderboard_id=`.
//! Creates answer 201, or 200 when the same settings already exist.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::cursor::CursorSigner;
use leaderboard::error::DomainError;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::ServiceError;
use leaderboard::service::boards::{self, Created, ListQuery, PatchBoard};
use leaderboard::service::cache;
use leaderboard::service::mappings;
use leaderboard::service::moderation::Operator;
use leaderboard::service::seal::{self, HistoryRequest};
use leaderboard::store::{CachePlane, RankIndex, ScoreStore};
use serde::Serialize;

pub struct Deps<S, I, P> {
    pub store: S,
    /// Marks a new board's index complete; answers a board's index health.
    pub index: I,
    pub signer: CursorSigner,
    /// The rank index's control plane, when the deployment names its replication group.
    pub plane: Option<P>,
}

fn created<T: Serialize>(result: Result<Created<T>, ServiceError>) -> Response {
    match result {
        Ok(Created::New(v)) => http::json(201, &v),
        Ok(Created::Existing(v)) => http::json(200, &v),
        Err(e) => http::error_response(&e),
    }
}

pub async fn handle<S: ScoreStore, I: RankIndex, P: CachePlane>(
    deps: &Deps<S, I, P>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let store = &deps.store;
    let lb = || http::path(req, "lb", LeaderboardId::parse);
    let source = || req.path_parameters.get("source").map_or("", String::as_str);
    Ok(match http::route(req) {
        "POST /leaderboards" => created(
            async { boards::create_board(store, &deps.index, http::json_body(req)?).await }.await,
        ),
        "GET /leaderboards" => {
            let result = async {
                let q = ListQuery::parse(
                    http::query(req, "game"),
                    http::query(req, "mode"),
                    http::query(req, "status"),
                    http::query(req, "limit"),
                    http::query(req, "cursor"),
                )?;
                boards::list_boards(store, &deps.signer, q).await
            };
            http::respond(200, result.await)
        }
        "GET /leaderboards/{lb}" => {
            http::respond(200, async { boards::get_board(store, &lb()?).await }.await)
        }
        "PATCH /leaderboards/{lb}" => {
            let result = async {
                let patch: PatchBoard = http::json_body(req)?;
                let lb = lb()?;
                let op = Operator(http::operator(req));
                boards::change_status(store, &op, &lb, patch).await
            };
            http::respond(200, result.await)
        }
        "GET /leaderboards/{lb}/results" => {
            http::respond(200, async { seal::results(store, &lb()?).await }.await)
        }
        "GET /games/{game}/modes/{mode}/players/{p}/history" => {
            let result = async {
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
            };
            http::respond(200, result.await)
        }
        "POST /families" => {
            created(async { boards::create_family(store, http::json_body(req)?).await }.await)
        }
        "GET /families/{game}/{mode}" => {
            let result = async {
                let game = req.path_parameters.get("game").map_or("", String::as_str);
                let mode = req.path_parameters.get("mode").map_or("", String::as_str);
                boards::get_family(store, game, mode).await
            };
            http::respond(200, result.await)
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
        "GET /admin/index" => {
            let result = async {
                let lb = http::query(req, "leaderboard_id")
                    .map(LeaderboardId::parse)
                    .transpose()?;
                cache::index_view(store, &deps.index, deps.plane.as_ref(), lb.as_ref()).await
            };
            http::respond(200, result.await)
        }
        _ => http::unknown_route(req),
    })
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::memory::{MemoryIndex, MemoryPlane, MemoryStore};

    use super::*;

    #[tokio::test]
    async fn creates_once_reads_and_refuses_a_transition_out_of_closed() {
        let deps = Deps {
            store: MemoryStore::default(),
            index: MemoryIndex::default(),
            signer: CursorSigner::new("test"),
            plane: None::<MemoryPlane>,
        };
        let call = |route: &'static str, body: Option<&'static str>| {
            let req = http::request(route, &[("lb", "h:boards")], &[], body);
            handle(&deps, LambdaEvent::new(req, Invocation::default()))
        };
        let create = Some(r#"{"leaderboard_id": "h:boards", "policy": "SUM"}"#);
        assert_eq!(
            call("POST /leaderboards", create)
                .await
                .unwrap()
                .status_code,
            201
        );
        assert_eq!(
            call("POST /leaderboards", create)
                .await
                .unwrap()
                .status_code,
            200
        );
        let other = Some(r#"{"leaderboard_id": "h:boards", "policy": "MIN"}"#);
        assert_eq!(
            call("POST /leaderboards", other).await.unwrap().status_code,
            409
        );
        let got = call("GET /leaderboards/{lb}", None).await.unwrap();
        assert_eq!(http::response_json(&got).unwrap()["policy"], "SUM");
        let close = Some(r#"{"status": "CLOSED"}"#);
        assert_eq!(
            call("PATCH /leaderboards/{lb}", close)
                .await
                .unwrap()
                .status_code,
            200
        );
        let reopen = call("PATCH /leaderboards/{lb}", Some(r#"{"status": "ACTIVE"}"#))
            .await
            .unwrap();
        assert_eq!(reopen.status_code, 409);
        let list = call("GET /leaderboards", None).await.unwrap();
        assert_eq!(
            http::response_json(&list).unwrap()["boards"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
}
