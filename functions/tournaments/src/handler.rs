//! Tournaments (docs/tournaments.md): `POST /tournaments` and `PATCH /tournaments/{t}`
//! (server-only, audited), `GET /tournaments`, `GET /tournaments/{t}`; joins by the game's servers (`POST
//! /tournaments/{t}/players/{p}/join`) or by the signed-in player (`POST
//! /tournaments/{t}/join`); results (`POST /tournaments/{t}/players/{p}/score`,
//! server-only); a player's cohort (`GET /tournaments/{t}/players/{p}/cohort`); and
//! leagues (docs/leagues.md): a player's standing (`GET
//! /tournaments/{t}/players/{p}/league`) and a changed definition tried on a sealed
//! occurrence (`POST /tournaments/{t}/occurrences/{o}/league/dry-run`, server-only).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::Context;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::tournaments;
use leaderboard_core::store::{RankIndex, ScoreStore};

#[cfg(test)]
mod tests;

pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let tournament = || req.path_parameters.get("t").map_or("", String::as_str);
    reply::routed(&event, async |req, route| match route {
        "POST /tournaments" => {
            let result = async {
                let op = Operator(http::operator(req));
                tournaments::create(ctx, &op, body::json_body(req)?).await
            };
            reply::created(result.await)
        }
        "GET /tournaments" => reply::respond(
            200,
            tournaments::list(ctx, http::query(req, "after"), http::query(req, "limit")).await,
        ),
        "GET /tournaments/{t}" => reply::respond(200, tournaments::get(ctx, tournament()).await),
        "PATCH /tournaments/{t}" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                tournaments::update(ctx, &op, tournament(), body::json_body(req)?).await
            })
            .await
        }
        "POST /tournaments/{t}/players/{p}/join" => reply::respond(
            200,
            async {
                Ok(tournaments::join(ctx, tournament(), &http::player(req)?)
                    .await?
                    .0)
            }
            .await,
        ),
        "POST /tournaments/{t}/join" => {
            reply::reply(200, async {
                // The JWT authorizer admits only signed-in players; the subject joins.
                let me = http::me(req)?;
                Ok(tournaments::join(ctx, tournament(), &me).await?.0)
            })
            .await
        }
        "POST /tournaments/{t}/players/{p}/score" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                let body = body::json_body(req)?;
                tournaments::submit(ctx, tournament(), &http::player(req)?, body, &op).await
            })
            .await
        }
        "GET /tournaments/{t}/players/{p}/cohort" => reply::respond(
            200,
            async { tournaments::cohort(ctx, tournament(), &http::player(req)?).await }.await,
        ),
        "GET /tournaments/{t}/players/{p}/league" => reply::respond(
            200,
            async { tournaments::standing(ctx, tournament(), &http::player(req)?).await }.await,
        ),
        "POST /tournaments/{t}/occurrences/{o}/league/dry-run" => {
            reply::reply(200, async {
                let occurrence = req.path_parameters.get("o").map_or("", String::as_str);
                tournaments::dry_run(ctx, tournament(), occurrence, body::json_body(req)?).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
