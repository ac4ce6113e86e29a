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
    Ok(http::stamped(
        req,
        match http::route(req) {
            "POST /leaderboards" => created(
                async { boards::create_board(store, &deps.index, http::json_body(req)?).await }
                    .await,
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
                    let param =
                        |name: &str| req.path_parameters.get(name).map_or("", String::as_str);
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
                    async { mappings::put_mapping(store, source(), http::json_body(req)?).await }
                        .await,
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
                let result = async {
                    let lb = http::query(req, "leaderboard_id")
                        .map(LeaderboardId::parse)
                        .transpose()?;
                    cache_plane::index_view(store, &deps.index, deps.plane.as_ref(), lb.as_ref())
                        .await
                };
                http::respond(200, result.await)
            }
            _ => http::unknown_route(req),
        },
    ))
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::memory::{MemoryDeadLetters, MemoryIndex, MemoryPlane, MemoryStore};

    use super::*;

    #[tokio::test]
    async fn creates_once_reads_and_refuses_a_transition_out_of_closed() {
        let deps = Deps {
            store: MemoryStore::default(),
            index: MemoryIndex::default(),
            signer: CursorSigner::new("test"),
            plane: None::<MemoryPlane>,
            dead_letters: None::<MemoryDeadLetters>,
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

    #[tokio::test]
    async fn the_index_view_answers_what_it_can_read_and_names_the_rest() {
        let index = |plane: MemoryPlane| Deps {
            store: MemoryStore::default(),
            index: MemoryIndex::default(),
            signer: CursorSigner::new("test"),
            plane: Some(plane),
            dead_letters: Some(MemoryDeadLetters::default()),
        };
        for (deps, group_read) in [
            (index(MemoryPlane::even("rg", 3)), true),
            (index(MemoryPlane(None)), false),
        ] {
            let create = http::request(
                "POST /leaderboards",
                &[],
                &[],
                Some(r#"{"leaderboard_id": "h:idx"}"#),
            );
            handle(&deps, LambdaEvent::new(create, Invocation::default()))
                .await
                .unwrap();
            let view = |q: &'static str| {
                let req = http::request("GET /admin/index", &[], &[("leaderboard_id", q)], None);
                handle(&deps, LambdaEvent::new(req, Invocation::default()))
            };
            let got = view("h:idx").await.unwrap();
            let body = http::response_json(&got).unwrap();
            assert_eq!(got.status_code, 200, "{body}");
            assert_eq!(body["board"]["health"], "ready");
            assert_eq!(
                body["board"]["slot"],
                leaderboard::redis::board_slot(&LeaderboardId::parse("h:idx").unwrap())
            );
            assert_eq!(body["replication_group"].is_object(), group_read, "{body}");
            assert_eq!(
                body["board"]["node_group_id"].is_string(),
                group_read,
                "{body}"
            );
            // The twin offers no events: said, not an error.
            let said = body["unavailable"].to_string();
            assert!(said.contains("DescribeEvents"), "{said}");
            assert_eq!(
                said.contains("DescribeReplicationGroups"),
                !group_read,
                "{said}"
            );
            assert_eq!(view("h:none").await.unwrap().status_code, 404);
            assert_eq!(view("bad id").await.unwrap().status_code, 400);
        }
    }
}
