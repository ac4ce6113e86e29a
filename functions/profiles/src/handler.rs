//! Players' profiles: `GET /players/{p}/profile` (anyone signed in), `PUT
//! /players/{p}/profile` (the game's servers: the whole profile), `PATCH
//! /players/{p}/profile` (an operator resets card fields, with a reason, audited),
//! `PUT /me/profile` (the signed-in player's own card, where `PLAYERS_SET_PROFILES`
//! allows it) and `GET /admin/players` (operators find players by a prefix of their
//! name). And players' rewards (docs/rewards.md): `GET /me/rewards` and `POST
//! /me/rewards/{id}/claim` for the signed-in player, `GET /players/{p}/rewards` and
//! `POST /players/{p}/rewards/{id}/claim` for the game's servers and operators.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::Context;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::profiles::{self, Writer};
use leaderboard_core::service::rewards;
use leaderboard_core::store::{
    CardCopies, EventPublisher, ModerationStore, ProfileStore, RewardStore,
};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::limit_within;

#[cfg(test)]
mod tests;

pub struct Deps<S, I, E> {
    pub ctx: Context<S, I>,
    /// Where a claim's `leaderboard.reward.claimed` goes.
    pub events: E,
}

/// The profile routes need the profiles and the audit log, and of the index only the
/// card copies a changed name refreshes; the reward routes the rewards and the bus.
pub async fn handle<
    S: ProfileStore + ModerationStore + RewardStore,
    I: CardCopies,
    E: EventPublisher,
>(
    deps: &Deps<S, I, E>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let ctx = &deps.ctx;
    let claim = async |req: &Request, player: PlayerId, by: &str| {
        let id = http::path(req, "id", leaderboard_rules::reward::parse_reward_id)?;
        rewards::claim(&ctx.store, &deps.events, &player, &id, by).await
    };
    reply::routed(&event, async |req, route| match route {
        "GET /players/{p}/profile" => {
            reply::reply(200, async { profiles::get(ctx, &http::player(req)?).await }).await
        }
        "PUT /players/{p}/profile" => {
            reply::reply(200, async {
                profiles::put(
                    ctx,
                    &http::player(req)?,
                    body::json_body(req)?,
                    Writer::Server,
                )
                .await
            })
            .await
        }
        "PATCH /players/{p}/profile" => {
            reply::reply(200, async {
                let op = Operator(http::operator(req));
                profiles::reset(ctx, &http::player(req)?, body::json_body(req)?, &op).await
            })
            .await
        }
        "GET /admin/players" => {
            reply::reply(200, async {
                let limit = limit_within(http::query(req, "limit"), 20, 100)? as u32;
                // Free text: a comma in it is the text's (the event type splits a value
                // on commas, as it does a list's).
                let prefix = http::query_list(req, "name_prefix")
                    .ok_or_else(|| DomainError::invalid("name_prefix", "is required"))?;
                profiles::find(ctx, &prefix, http::query(req, "cursor"), limit).await
            })
            .await
        }
        "PUT /me/profile" => {
            reply::reply(200, async {
                // The JWT authorizer admits only signed-in players; the subject is the
                // player, so no one can write another's card.
                let me = http::caller(req)
                    .player
                    .ok_or(ServiceError::ProfilesServerOnly)?;
                profiles::put(ctx, &me, body::json_body(req)?, Writer::Player).await
            })
            .await
        }
        "GET /me/rewards" => {
            reply::reply(200, async {
                rewards::list(&ctx.store, &http::me(req)?).await
            })
            .await
        }
        "POST /me/rewards/{id}/claim" => {
            reply::reply(200, async { claim(req, http::me(req)?, "player").await }).await
        }
        "GET /players/{p}/rewards" => {
            reply::reply(200, async {
                rewards::list(&ctx.store, &http::player(req)?).await
            })
            .await
        }
        "POST /players/{p}/rewards/{id}/claim" => {
            reply::reply(200, async {
                claim(req, http::player(req)?, &http::operator(req)).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
