//! Seals closed windows (see `leaderboard_core::service::seal`). Three ways in, one payload
//! (`{}` for every due board, or `{leaderboard_id}` for one): the schedule (every five
//! minutes, which also goes on with what an earlier run left), a direct invocation, and
//! `POST /admin/seal` through API Gateway (200 when done, 202 when a call must go on).
//! The schedule also takes up every reset whose queue turn was lost. It also runs the
//! long jobs that walk a board the same way, exports and resets (`jobs`: their routes
//! and their queue).

use std::time::{Duration, Instant};

use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::{self, Call, InvokeError, work_until};
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::metrics;
use leaderboard_core::service::seal::{self, SealReport, SealSettings, reset};
use leaderboard_core::store::{EventPublisher, ExportFiles, ExportStore, JobQueue, ScoreStore};
use leaderboard_rules::ids::LeaderboardId;
use serde::Deserialize;
use serde_json::Value;

mod jobs;
#[cfg(test)]
mod tests;

pub use jobs::Jobs;

/// Time kept free before the Lambda deadline to save progress and answer.
const MARGIN: Duration = Duration::from_secs(10);
/// Longest a call through API Gateway works (its integration times out at 30 s).
const HTTP_BUDGET: Duration = Duration::from_secs(20);

pub struct Deps<S, E, F, Q> {
    pub store: S,
    pub events: E,
    pub settings: SealSettings,
    pub jobs: Jobs<F, Q>,
}

/// What to seal: one board, or every due one.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealRequest {
    pub leaderboard_id: Option<LeaderboardId>,
}

async fn run<S: ScoreStore, E: EventPublisher, F, Q: JobQueue>(
    deps: &Deps<S, E, F, Q>,
    req: SealRequest,
    until: Instant,
) -> Result<SealReport, ServiceError> {
    let (store, events) = (&deps.store, &deps.events);
    match &req.leaderboard_id {
        Some(lb) => seal::seal(store, events, deps.settings, lb, until).await,
        None => {
            let report = seal::sweep(store, events, deps.settings, until).await?;
            let jobs = (store, events, &deps.jobs.queue);
            reset::sweep(jobs, deps.jobs.resets, until).await?;
            Ok(report)
        }
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
    if jobs::is_job(&event.payload) {
        // Boxed: its future is deep enough to overflow the compiler's layout queries.
        let ports = (&deps.store, &deps.events);
        return Box::pin(jobs::handle(ports, &deps.jobs, event)).await;
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
