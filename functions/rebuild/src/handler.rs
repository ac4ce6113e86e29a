//! Rebuilds rank indexes from DynamoDB. Three ways in, one payload
//! (`{leaderboard_id}` or `{all: true}`, optional `budget_ms`):
//! `POST /admin/rebuild` through API Gateway (200 when done, 202 when it must be invoked
//! again to finish), a direct invocation, and the schedule (`{all: true}` every minute),
//! which also finishes what an earlier invocation left in progress.

use std::time::Duration;

use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::{self, Call, InvokeError, work_until};
use leaderboard_core::service::Context;
use leaderboard_core::service::metrics;
use leaderboard_core::service::rebuild::{self, RebuildRequest};
use leaderboard_core::store::{RankIndex, ScoreStore};
use serde_json::Value;

#[cfg(test)]
mod tests;

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
    let req = call.request();
    let sweep = req.as_ref().is_ok_and(|r| r.all);
    let result = async {
        let req = req?;
        let budget = req.budget_ms.map(Duration::from_millis);
        let until = work_until(deadline_ms, MARGIN, budget);
        Box::pin(rebuild::run(ctx, req, until)).await
    }
    .await;
    // The sweep (`{all: true}`, every minute) is work that must happen: its heartbeat
    // and its failures (docs/runbook.md).
    if sweep {
        metrics::run("SweepRuns", "SweepRunFailures", result.is_err());
    }
    invoke::answer(over_http, result, |report| report.done)
}
