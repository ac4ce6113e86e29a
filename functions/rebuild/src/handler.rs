//! Rebuilds rank indexes from DynamoDB. Three ways in, one payload
//! (`{leaderboard_id}` or `{all: true}`, optional `budget_ms`):
//! `POST /admin/rebuild` through API Gateway (200 when done, 202 when it must be invoked
//! again to finish), a direct invocation, and the schedule (`{all: true}` every minute),
//! which also finishes what an earlier invocation left in progress.

use std::time::Duration;

use lambda_runtime::LambdaEvent;
use leaderboard::invoke::{self, Call, InvokeError, work_until};
use leaderboard::service::Context;
use leaderboard::service::rebuild::{self, RebuildRequest};
use leaderboard::store::{RankIndex, ScoreStore};
use serde_json::Value;

/// Time kept free before the Lambda deadline to checkpoint and answer.
const MARGIN: Duration = Duration::from_secs(10);

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError> {
    let deadline_ms = event.context.deadline;
    let call = Call::<RebuildRequest>::of(event.payload)?;
    let over_http = call.over_http();
    let result = async {
        let req = call.request()?;
        let budget = req.budget_ms.map(Duration::from_millis);
        let until = work_until(deadline_ms, MARGIN, budget);
        Box::pin(rebuild::run(ctx, req, until)).await
    };
    invoke::answer(over_http, result.await, |report| report.done)
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::memory;
    use leaderboard::store::Health;

    use super::*;
    use leaderboard::http;
    use leaderboard::time::now_ms;

    fn invocation() -> Invocation {
        let mut inv = Invocation::default();
        inv.deadline = (now_ms() + 60_000) as u64;
        inv
    }

    #[tokio::test]
    async fn rebuilds_directly_and_over_http_and_names_a_bad_request() {
        let ctx = memory::context();
        let lb = memory::seed(&ctx, "h:rebuild", Policy::Best, &[("a", 1), ("b", 2)]).await;
        ctx.index.wipe(&lb);
        let direct = serde_json::json!({"leaderboard_id": "h:rebuild"});
        let report = handle(&ctx, LambdaEvent::new(direct, invocation()))
            .await
            .unwrap();
        assert_eq!(report["done"], true);
        assert_eq!(report["boards"][0]["loaded"], 2);
        assert_eq!(
            ctx.index.health(std::slice::from_ref(&lb)).await.unwrap(),
            [Health::Ready]
        );
        let body = r#"{"all": true}"#;
        let req = http::request("POST /admin/rebuild", &[], &[], Some(body));
        let over_http = serde_json::to_value(req).unwrap();
        let resp = handle(&ctx, LambdaEvent::new(over_http, invocation()))
            .await
            .unwrap();
        assert_eq!(resp["statusCode"], 200);
        let neither = serde_json::json!({});
        let err = handle(&ctx, LambdaEvent::new(neither, invocation()))
            .await
            .unwrap_err();
        assert_eq!(err.error_type(), "InvalidRequest");
        let not_an_object = serde_json::json!("rebuild");
        let err = handle(&ctx, LambdaEvent::new(not_an_object, invocation()))
            .await
            .unwrap_err();
        assert_eq!(err.error_type(), "InvalidPayload");
    }
}
