//! Moderation, server-only: `DELETE /leaderboards/{lb}/players/{p}` (remove an entry),
//! `PUT` / `DELETE /games/{game}/bans/{p}` (ban, lift a ban), `GET /games/{game}/bans`
//! and `GET /admin/players/{p}/bans` (a game's bans, a player's), `DELETE /players/{p}`
//! (erase a player); `GET /admin/held` and `POST /admin/held/{id}` (the review queue of
//! held results: list, approve or reject; docs/integrity.md), `POST
//! /admin/integrity/dry-run` (which standings a candidate rule set would have held); the audit trail they leave is read from the admin function. Each
//! body carries the `reason`; the actor is the IAM principal the gateway verified. Sweeps
//! over many boards answer 200 when complete, 202 with a `cursor` to call again with
//! otherwise: signed, and bound to its sweep (its game and player), so no cursor the
//! service did not give can make a sweep skip boards and still answer "complete".

use std::time::Duration;

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::invoke::work_until;
use leaderboard::edge::{body, reply};
use leaderboard_core::service::Context;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::integrity::{self, Decision};
use leaderboard_core::service::moderation::{self, Sweep};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::store::{HeldFilter, RankIndex, ScoreStore};
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::page::limit_within;
use leaderboard_rules::window::parse_name;
use serde::{Deserialize, Serialize};

#[cfg(test)]
mod tests;

/// Time kept free before the Lambda deadline to record the action and answer.
const MARGIN: Duration = Duration::from_secs(5);

/// What the handler works with, built once per container.
pub struct Deps<S, I> {
    pub ctx: Context<S, I>,
    /// Signs and checks sweep cursors (`CURSOR_SECRET`).
    pub signer: CursorSigner,
}

/// A sweep's reply, its cursor signed for `scope`: 200 when it finished, 202 when it
/// must be called again.
fn swept<T: Serialize>(
    signer: &CursorSigner,
    scope: &str,
    result: Result<T, ServiceError>,
    sweep: fn(&mut T) -> &mut Sweep,
) -> Response {
    match result {
        Ok(mut reply) => {
            let sweep = sweep(&mut reply);
            sweep.cursor = sweep.cursor.take().map(|at| signer.sign(scope, &at));
            reply::json(if sweep.complete { 200 } else { 202 }, &reply)
        }
        Err(e) => reply::error_response(&e),
    }
}

/// Body of `POST /admin/held/{id}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    decision: Option<String>,
    reason: Option<serde_json::Value>,
}

/// Body of `POST /admin/integrity/dry-run`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DryRunBody {
    leaderboard_id: Option<String>,
    integrity: Option<serde_json::Value>,
    limit: Option<u64>,
}

/// `GET /admin/held`'s parameters: the game (absent: standalone boards), a board and a
/// player to filter by, the cursor and the page size (1 to 100, default 25).
fn held_query(req: &Request) -> Result<(String, HeldFilter, Option<&str>, u32), ServiceError> {
    let game = match http::query(req, "game") {
        Some(g) => parse_name("game", g)?,
        None => String::new(),
    };
    let filter = HeldFilter {
        board: http::query(req, "board")
            .map(|b| LeaderboardId::parse(b).map_err(|e| e.for_field("board")))
            .transpose()?,
        player: http::query(req, "player")
            .map(|p| PlayerId::parse(p).map_err(|e| e.for_field("player")))
            .transpose()?,
    };
    let limit = limit_within(http::query(req, "limit"), 25, 100)? as u32;
    Ok((game, filter, http::query(req, "cursor"), limit))
}

/// `POST /admin/integrity/dry-run`: which standings `integrity` would have held.
async fn dry_run<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &Request,
) -> Result<integrity::DryRunReply, ServiceError> {
    let body: DryRunBody = body::json_body(req)?;
    let Some(lb) = body.leaderboard_id else {
        return Err(DomainError::invalid("leaderboard_id", "is required").into());
    };
    let lb = LeaderboardId::parse(&lb)?;
    let Some(rules) = body.integrity else {
        return Err(DomainError::invalid("integrity", "is required").into());
    };
    let limit = body.limit.unwrap_or(100);
    if !(1..=integrity::MAX_DRY_RUN).contains(&limit) {
        let why = format!("must be from 1 to {}", integrity::MAX_DRY_RUN);
        return Err(DomainError::invalid("limit", why).into());
    }
    integrity::dry_run(ctx, &lb, rules, limit).await
}

/// `POST /admin/held/{id}`: an operator's decision on a held result.
async fn decide<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    op: &Operator,
    req: &Request,
) -> Result<integrity::DecisionReply, ServiceError> {
    let id = req.path_parameters.get("id").map_or("", String::as_str);
    let body: DecisionBody = body::json_body(req)?;
    let decision = match body.decision.as_deref() {
        Some("approve") => Decision::Approve,
        Some("reject") => Decision::Reject,
        _ => {
            let why = "must be \"approve\" or \"reject\"";
            return Err(DomainError::invalid("decision", why).into());
        }
    };
    let reason = Reason::parse(ReasonBody {
        reason: body.reason,
    })?;
    integrity::decide(ctx, op, id, decision, reason).await
}

pub async fn handle<S: ScoreStore, I: RankIndex>(
    deps: &Deps<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let (ctx, signer) = (&deps.ctx, &deps.signer);
    let req = &event.payload;
    let until = work_until(event.context.deadline, MARGIN, None);
    let op = Operator(http::operator(req));
    let game = || req.path_parameters.get("game").map_or("", String::as_str);
    let reason = || Ok::<_, ServiceError>(Reason::parse(body::json_body(req)?)?);
    // Where a sweep that answered 202 stopped, if this sweep's own cursor.
    let cursor = |scope: &str| {
        http::query(req, "cursor")
            .map(|c| signer.verify::<String>(scope, c))
            .transpose()
    };
    let raw_player = || req.path_parameters.get("p").map_or("", String::as_str);
    let ban_scope = || format!("sweep:ban:{}:{}", game(), raw_player());
    let erase_scope = || format!("sweep:erase:{}", raw_player());
    reply::routed(&event, async |req, route| match route {
        "GET /admin/held" => {
            reply::reply(200, async {
                let (game, filter, cursor, limit) = held_query(req)?;
                integrity::list(ctx, signer, &game, &filter, cursor, limit).await
            })
            .await
        }
        "POST /admin/integrity/dry-run" => reply::respond(200, dry_run(ctx, req).await),
        "POST /admin/held/{id}" => reply::respond(200, decide(ctx, &op, req).await),
        "DELETE /leaderboards/{lb}/players/{p}" => {
            reply::reply(200, async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                moderation::remove::remove_entry(ctx, &lb, &http::player(req)?, reason()?, &op)
                    .await
            })
            .await
        }
        "PUT /games/{game}/bans/{p}" => {
            let scope = ban_scope();
            let result = async {
                let at = cursor(&scope)?;
                moderation::ban::ban(ctx, game(), &http::player(req)?, reason()?, &op, at, until)
                    .await
            };
            swept(signer, &scope, result.await, |r| &mut r.sweep)
        }
        "GET /games/{game}/bans" => reply::respond(
            200,
            moderation::ban::list(
                &ctx.store,
                game(),
                http::query(req, "limit"),
                http::query(req, "cursor"),
            )
            .await,
        ),
        "GET /admin/players/{p}/bans" => {
            reply::reply(200, async {
                moderation::ban::of_player(&ctx.store, &http::player(req)?).await
            })
            .await
        }
        "DELETE /games/{game}/bans/{p}" => {
            reply::reply(200, async {
                moderation::ban::unban(ctx, game(), &http::player(req)?, reason()?, &op).await
            })
            .await
        }
        "DELETE /players/{p}" => {
            let scope = erase_scope();
            let result = async {
                let at = cursor(&scope)?;
                moderation::erase::erase(ctx, &http::player(req)?, reason()?, &op, at, until).await
            };
            swept(signer, &scope, result.await, |r| &mut r.sweep)
        }
        _ => reply::unknown_route(req),
    })
    .await
}
