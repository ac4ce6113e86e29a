//! Moderation, server-only: `DELETE /leaderboards/{lb}/players/{p}` (remove an entry),
//! `PUT` / `DELETE /games/{game}/bans/{p}` (ban, lift a ban), `DELETE /players/{p}`
//! (erase a player), `GET /admin/audit` (the audit trail). Each body carries the
//! `reason`; the actor is the IAM principal the gateway verified. Sweeps over many
//! boards answer 200 when complete, 202 with a `cursor` to call again with otherwise.

use std::time::Duration;

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::error::{DomainError, ServiceError};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::invoke::work_until;
use leaderboard::service::Context;
use leaderboard::service::moderation::{self, Operator, Reason, Sweep};
use leaderboard::store::{RankIndex, ScoreStore};
use serde::Serialize;

/// Time kept free before the Lambda deadline to record the action and answer.
const MARGIN: Duration = Duration::from_secs(5);

/// A sweep's reply: 200 when it finished, 202 when it must be called again.
fn swept<T: Serialize>(result: Result<T, ServiceError>, sweep: fn(&T) -> &Sweep) -> Response {
    match result {
        Ok(reply) => http::json(if sweep(&reply).complete { 200 } else { 202 }, &reply),
        Err(e) => http::error_response(&e),
    }
}

pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let until = work_until(event.context.deadline, MARGIN, None);
    let op = Operator(http::operator(req));
    let player = || http::path(req, "p", PlayerId::parse);
    let game = || req.path_parameters.get("game").map_or("", String::as_str);
    let reason = || Ok::<_, ServiceError>(Reason::parse(http::json_body(req)?)?);
    // Where a sweep that answered 202 stopped; an empty one names no place (400).
    let cursor = || match http::query(req, "cursor") {
        Some("") => Err(DomainError::InvalidCursor),
        c => Ok(c.map(str::to_owned)),
    };
    Ok(match http::route(req) {
        "DELETE /leaderboards/{lb}/players/{p}" => {
            let result = async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                moderation::remove::remove_entry(ctx, &lb, &player()?, reason()?, &op).await
            };
            http::respond(200, result.await)
        }
        "PUT /games/{game}/bans/{p}" => {
            let result = async {
                moderation::ban::ban(ctx, game(), &player()?, reason()?, &op, cursor()?, until)
                    .await
            };
            swept(result.await, |r| &r.sweep)
        }
        "DELETE /games/{game}/bans/{p}" => {
            let result =
                async { moderation::ban::unban(ctx, game(), &player()?, reason()?, &op).await };
            http::respond(200, result.await)
        }
        "DELETE /players/{p}" => {
            let result = async {
                moderation::erase::erase(ctx, &player()?, reason()?, &op, cursor()?, until).await
            };
            swept(result.await, |r| &r.sweep)
        }
        "GET /admin/audit" => {
            let result = async {
                let (limit, cursor) = moderation::audit::parse_query(
                    http::query(req, "limit"),
                    http::query(req, "cursor"),
                )?;
                moderation::audit::list(&ctx.store, limit, cursor).await
            };
            http::respond(200, result.await)
        }
        _ => http::unknown_route(req),
    })
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::memory::{self, MemoryIndex, MemoryStore};

    use super::*;
    use leaderboard::time::now_ms;

    async fn call(
        ctx: &Context<MemoryStore, MemoryIndex>,
        route: &str,
        params: &[(&str, &str)],
        body: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let req = http::request(route, params, &[], body);
        let mut inv = Invocation::default();
        inv.deadline = (now_ms() + 60_000) as u64;
        let resp = handle(ctx, LambdaEvent::new(req, inv)).await.unwrap();
        let json = http::response_json(&resp).unwrap_or_default();
        (resp.status_code as u16, json)
    }

    #[tokio::test]
    async fn removes_an_entry_once_and_audits_it_and_refuses_a_missing_reason() {
        let ctx = memory::context();
        memory::seed(
            &ctx,
            "h:mod",
            Policy::Best,
            &[("a", 30), ("b", 20), ("c", 10)],
        )
        .await;
        let params = [("lb", "h:mod"), ("p", "b")];
        let route = "DELETE /leaderboards/{lb}/players/{p}";
        let (status, body) = call(&ctx, route, &params, Some(r#"{}"#)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("invalid_request"))
        );
        let (status, body) = call(&ctx, route, &params, Some(r#"{"reason": "cheating"}"#)).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["previous_score"], 20);
        assert_eq!(body["previous_rank"], 2);
        let (status, body) = call(&ctx, route, &params, Some(r#"{"reason": "again"}"#)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_ranked"))
        );
        let (status, audit) = call(&ctx, "GET /admin/audit", &[], None).await;
        assert_eq!(status, 200);
        let records = audit["records"].as_array().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0]["action"], "remove_entry");
        assert_eq!(records[0]["reason"], "cheating");
        assert_eq!(records[0]["player_id"], "b");
    }
}
