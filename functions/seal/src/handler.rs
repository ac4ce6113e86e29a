//! Seals closed windows (see `leaderboard_core::service::seal`). Three ways in, one payload
//! (`{}` for every due board, or `{leaderboard_id}` for one): the schedule (every five
//! minutes, which also goes on with what an earlier run left), a direct invocation, and
//! `POST /admin/seal` through API Gateway (200 when done, 202 when a call must go on).
//! It also writes exports, which walk a board the same way (`export`: their routes and
//! their queue).

use std::time::{Duration, Instant};

use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::{self, Call, InvokeError, work_until};
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::metrics;
use leaderboard_core::service::seal::{self, SealReport, SealSettings};
use leaderboard_core::store::{EventPublisher, ExportFiles, ExportStore, JobQueue, ScoreStore};
use leaderboard_rules::ids::LeaderboardId;
use serde::Deserialize;
use serde_json::Value;

mod export;
#[cfg(test)]
mod tests;

pub use export::Exports;

/// Time kept free before the Lambda deadline to save progress and answer.
const MARGIN: Duration = Duration::from_secs(10);
/// Longest a call through API Gateway works (its integration times out at 30 s).
const HTTP_BUDGET: Duration = Duration::from_secs(20);

pub struct Deps<S, E, F, Q> {
    pub store: S,
    pub events: E,
    pub settings: SealSettings,
    pub exports: Exports<F, Q>,
}

/// What to seal: one board, or every due one.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealRequest {
    pub leaderboard_id: Option<LeaderboardId>,
}

async fn run<S: ScoreStore, E: EventPublisher, F, Q>(
    deps: &Deps<S, E, F, Q>,
    req: SealRequest,
    until: Instant,
) -> Result<SealReport, ServiceError> {
    match &req.leaderboard_id {
        Some(lb) => seal::seal(&deps.store, &deps.events, deps.settings, lb, until).await,
        None => seal::sweep(&deps.store, &deps.events, deps.settings, until).await,
    }
}

pub async fn handle<S, E, F, Q>(
    deps: &Deps<S, E, F, Q>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError>
where
    S: ScoreStore + ExportStore,
    E: EventPublisher,
    F: ExportFiles,
    Q: JobQueue,
{
    if export::is_export(&event.payload) {
        // Boxed: its future is deep enough to overflow the compiler's layout queries.
        return Box::pin(export::handle(&deps.store, &deps.exports, event)).await;
    }
    let deadline_ms = event.context.deadline;
    let call = Call::<SealRequest>::of(event.payload)?;
    let over_http = call.over_http();
    let budget = over_http.is_some().then_some(HTTP_BUDGET);
    let result = async {
        run(
            deps,
            call.request()?,
            work_until(deadline_ms, MARGIN, budget),
        )
        .await
    }
    .await;
    // Every run's heartbeat and failure (docs/runbook.md): runs that stop, or keep
    // failing, alarm; the sweep sets `SealLagSeconds` itself.
    metrics::run("SealRuns", "SealRunFailures", result.is_err());
    invoke::answer(over_http, result, |report| report.done)
}
