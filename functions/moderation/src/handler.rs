//! Moderation, server-only: `DELETE /leaderboards/{lb}/players/{p}` (remove an entry),
//! `PUT` / `DELETE /games/{game}/bans/{p}` (ban, lift a ban), `DELETE /players/{p}`
//! (erase a player), `GET /admin/audit` (the audit trail). Each body carries the
//! `reason`; the actor is the IAM principal the gateway verified. Sweeps over many
//! boards answer 200 when complete, 202 with a `cursor` to call again with otherwise:
//! signed, and bound to its sweep (its game and player), so no cursor the service did
//! not give can make a sweep skip boards and still answer "complete".

use std::time::Duration;

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::cursor::CursorSigner;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::invoke::work_until;
use leaderboard::service::Context;
use leaderboard::service::ServiceError;
use leaderboard::service::moderation::{self, Operator, Reason, Sweep};
use leaderboard::store::{RankIndex, ScoreStore};
use serde::Serialize;

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
            http::json(if sweep.complete { 200 } else { 202 }, &reply)
        }
        Err(e) => http::error_response(&e),
    }
}

pub async fn handle<S: ScoreStore, I: RankIndex>(
    deps: &Deps<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let (ctx, signer) = (&deps.ctx, &deps.signer);
    let req = &event.payload;
    let until = work_until(event.context.deadline, MARGIN, None);
    let op = Operator(http::operator(req));
    let player = || http::path(req, "p", PlayerId::parse);
    let game = || req.path_parameters.get("game").map_or("", String::as_str);
    let reason = || Ok::<_, ServiceError>(Reason::parse(http::json_body(req)?)?);
    // Where a sweep that answered 202 stopped, if this sweep's own cursor.
    let cursor = |scope: &str| {
        http::query(req, "cursor")
            .map(|c| signer.verify::<String>(scope, c))
            .transpose()
    };
    let raw_player = || req.path_parameters.get("p").map_or("", String::as_str);
    let ban_scope = || format!("sweep:ban:{}:{}", game(), raw_player());
    let erase_scope = || format!("sweep:erase:{}", raw_player());
    Ok(http::stamped(
        req,
        match http::route(req) {
            "DELETE /leaderboards/{lb}/players/{p}" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    moderation::remove::remove_entry(ctx, &lb, &player()?, reason()?, &op).await
                };
                http::respond(200, result.await)
            }
            "PUT /games/{game}/bans/{p}" => {
                let scope = ban_scope();
                let result = async {
                    let at = cursor(&scope)?;
                    moderation::ban::ban(ctx, game(), &player()?, reason()?, &op, at, until).await
                };
                swept(signer, &scope, result.await, |r| &mut r.sweep)
            }
            "DELETE /games/{game}/bans/{p}" => {
                let result =
                    async { moderation::ban::unban(ctx, game(), &player()?, reason()?, &op).await };
                http::respond(200, result.await)
            }
            "DELETE /players/{p}" => {
                let scope = erase_scope();
                let result = async {
                    let at = cursor(&scope)?;
                    moderation::erase::erase(ctx, &player()?, reason()?, &op, at, until).await
                };
                swept(signer, &scope, result.await, |r| &mut r.sweep)
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
        },
    ))
}

#[cfg(test)]
mod tests {

    use leaderboard::board::Policy;
    use leaderboard::memory::{self, MemoryIndex, MemoryStore};

    use super::*;

    fn deps() -> Deps<MemoryStore, MemoryIndex> {
        Deps {
            ctx: memory::context(),
            signer: CursorSigner::new("test"),
        }
    }

    async fn call(
        deps: &Deps<MemoryStore, MemoryIndex>,
        route: &str,
        params: &[(&str, &str)],
        query: &[(&str, &str)],
        body: Option<&str>,
    ) -> (u16, serde_json::Value) {
        let req = http::request(route, params, query, body);
        memory::reply(|e| handle(deps, e), req).await
    }

    #[tokio::test]
    async fn removes_an_entry_once_and_audits_it_and_refuses_a_missing_reason() {
        let deps = deps();
        memory::seed(
            &deps.ctx,
            "h:mod",
            Policy::Best,
            &[("a", 30), ("b", 20), ("c", 10)],
        )
        .await;
        let params = [("lb", "h:mod"), ("p", "b")];
        let route = "DELETE /leaderboards/{lb}/players/{p}";
        let (status, body) = call(&deps, route, &params, &[], Some(r#"{}"#)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("invalid_request"))
        );
        let (status, body) = call(
            &deps,
            route,
            &params,
            &[],
            Some(r#"{"reason": "cheating"}"#),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["previous_score"], 20);
        assert_eq!(body["previous_rank"], 2);
        let (status, body) = call(&deps, route, &params, &[], Some(r#"{"reason": "again"}"#)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (404, Some("not_ranked"))
        );
        let (status, audit) = call(&deps, "GET /admin/audit", &[], &[], None).await;
        assert_eq!(status, 200);
        let records = audit["records"].as_array().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0]["action"], "remove_entry");
        assert_eq!(records[0]["reason"], "cheating");
        assert_eq!(records[0]["player_id"], "b");
    }

    /// A sweep goes on only from a cursor the service gave for the same sweep: another
    /// player's, a ban's, or a bare board key (which would skip every board before it
    /// and still answer "complete") is refused with nothing done.
    #[tokio::test]
    async fn a_sweep_goes_on_only_from_its_own_signed_cursor() {
        let deps = deps();
        memory::seed(&deps.ctx, "h:s1", Policy::Best, &[("a", 3), ("b", 2)]).await;
        memory::seed(&deps.ctx, "h:s2", Policy::Best, &[("a", 5)]).await;
        let erase = "DELETE /players/{p}";
        let reason = Some(r#"{"reason": "asked"}"#);
        let after_s1 = deps.signer.sign("sweep:erase:a", &"##h:s1");
        for (player, cursor) in [
            ("b", after_s1.clone()),
            ("a", "##h:s1".to_owned()),
            ("a", deps.signer.sign("sweep:ban:g:a", &"##h:s1")),
            ("a", String::new()),
        ] {
            let query = [("cursor", cursor.as_str())];
            let (status, body) = call(&deps, erase, &[("p", player)], &query, reason).await;
            assert_eq!(
                (status, body["error"]["code"].as_str()),
                (400, Some("invalid_cursor")),
                "{player} {cursor}"
            );
        }
        let query = [("cursor", after_s1.as_str())];
        let (status, body) = call(&deps, erase, &[("p", "a")], &query, reason).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            (body["boards_scanned"].as_u64(), body["entries"].as_u64()),
            (Some(1), Some(1))
        );
    }

    #[test]
    fn a_stopped_sweep_answers_202_with_its_cursor_signed_for_its_scope() {
        use leaderboard::service::moderation::erase::ErasedReply;
        let signer = CursorSigner::new("test");
        let reply = ErasedReply {
            sweep: Sweep {
                cursor: Some("g#m#g:m:GLOBAL:ALL_TIME".into()),
                ..Sweep::default()
            },
            audit_id: None,
        };
        let resp = swept(&signer, "sweep:erase:a", Ok(reply), |r| &mut r.sweep);
        let body = http::response_json(&resp).unwrap_or_default();
        assert_eq!(resp.status_code, 202);
        let cursor = body["cursor"].as_str().unwrap_or_default();
        assert_eq!(
            signer
                .verify::<String>("sweep:erase:a", cursor)
                .ok()
                .as_deref(),
            Some("g#m#g:m:GLOBAL:ALL_TIME")
        );
        assert!(signer.verify::<String>("sweep:erase:b", cursor).is_err());
    }
}
