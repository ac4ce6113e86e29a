//! Board management: `POST /leaderboards`, `GET /leaderboards`, `GET /leaderboards/{lb}`,
//! `PATCH /leaderboards/{lb}`, `POST /families`, `GET /families/{game}/{mode}`, a board's
//! or a family's integrity rules and reward table changed (`PUT .../integrity`, `PUT
//! .../rewards`), and the
//! reads of sealed windows: `GET /leaderboards/{lb}/results`,
//! `GET /games/{game}/modes/{mode}/players/{p}/history`. Creates answer 201, or 200 when
//! the same settings already exist. The operators' own routes (`/admin/…`) are the admin
//! function's.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::boards::{self, ListQuery, PatchBoard};
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::seal::{self, HistoryRequest};
use leaderboard_core::store::{RankIndex, ScoreStore};
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::ids::LeaderboardId;

#[cfg(test)]
mod tests;

pub struct Deps<S, I> {
    pub store: S,
    /// Marks a new board's index complete.
    pub index: I,
    pub signer: CursorSigner,
    /// How long containers trust a cached definition (a family's rules change waits it
    /// out before its last look at the family's boards).
    pub cache_ttl: std::time::Duration,
}

/// A path parameter as sent (empty when absent).
fn param<'r>(req: &'r Request, name: &str) -> &'r str {
    req.path_parameters.get(name).map_or("", String::as_str)
}

pub async fn handle<S: ScoreStore, I: RankIndex>(
    deps: &Deps<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let store = &deps.store;
    let lb = || http::path(req, "lb", LeaderboardId::parse);
    reply::routed(&event, async |req, route| match route {
        "POST /leaderboards" => reply::created(
            async { boards::create_board(store, &deps.index, body::json_body(req)?).await }.await,
        ),
        "GET /leaderboards" => {
            reply::reply(200, async {
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
            reply::reply(200, async { boards::get_board(store, &lb()?).await }).await
        }
        "PATCH /leaderboards/{lb}" => {
            reply::reply(200, async {
                let patch: PatchBoard = body::json_body(req)?;
                let lb = lb()?;
                let op = Operator(http::operator(req));
                boards::change_status(store, &op, &lb, patch).await
            })
            .await
        }
        "PUT /leaderboards/{lb}/integrity" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                boards::change_board_rules(store, &op, &lb()?, body::json_body(req)?).await
            })
            .await
        }
        "PUT /families/{game}/{mode}/integrity" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                let family = (param(req, "game"), param(req, "mode"));
                let body = body::json_body(req)?;
                boards::change_family_rules(store, &op, family, body, deps.cache_ttl).await
            })
            .await
        }
        "PUT /leaderboards/{lb}/rewards" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                boards::change_board_rewards(store, &op, &lb()?, body::json_body(req)?).await
            })
            .await
        }
        "PUT /families/{game}/{mode}/rewards" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                let family = (param(req, "game"), param(req, "mode"));
                boards::change_family_rewards(store, &op, family, body::json_body(req)?).await
            })
            .await
        }
        "GET /leaderboards/{lb}/results" => {
            reply::reply(200, async { seal::results(store, &lb()?).await }).await
        }
        "GET /games/{game}/modes/{mode}/players/{p}/history" => {
            reply::reply(200, async {
                let q = HistoryRequest::parse(
                    param(req, "game"),
                    param(req, "mode"),
                    param(req, "p"),
                    http::query(req, "scope"),
                    http::query(req, "period"),
                    http::query(req, "limit"),
                    http::query(req, "cursor"),
                )?;
                seal::history(store, q).await
            })
            .await
        }
        "POST /families" => reply::created(
            async { boards::create_family(store, body::json_body(req)?).await }.await,
        ),
        "GET /families/{game}/{mode}" => {
            reply::reply(200, async {
                boards::get_family(store, param(req, "game"), param(req, "mode")).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
