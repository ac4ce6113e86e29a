//! Seals closed windows (see `leaderboard::service::seal`). Three ways in, one payload
//! (`{}` for every due board, or `{leaderboard_id}` for one): the schedule (every five
//! minutes, which also goes on with what an earlier run left), a direct invocation, and
//! `POST /admin/seal` through API Gateway (200 when done, 202 when a call must go on).

use std::time::{Duration, Instant};

use lambda_runtime::LambdaEvent;
use leaderboard::ids::LeaderboardId;
use leaderboard::invoke::{self, Call, InvokeError, work_until};
use leaderboard::service::ServiceError;
use leaderboard::service::seal::{self, SealReport, SealSettings};
use leaderboard::store::{EventPublisher, ScoreStore};
use serde::Deserialize;
use serde_json::Value;

/// Time kept free before the Lambda deadline to save progress and answer.
const MARGIN: Duration = Duration::from_secs(10);
/// Longest a call through API Gateway works (its integration times out at 30 s).
const HTTP_BUDGET: Duration = Duration::from_secs(20);

pub struct Deps<S, E> {
    pub store: S,
    pub events: E,
    pub settings: SealSettings,
}

/// What to seal: one board, or every due one.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SealRequest {
    pub leaderboard_id: Option<LeaderboardId>,
}

async fn run<S: ScoreStore, E: EventPublisher>(
    deps: &Deps<S, E>,
    req: SealRequest,
    until: Instant,
) -> Result<SealReport, ServiceError> {
    match &req.leaderboard_id {
        Some(lb) => seal::seal(&deps.store, &deps.events, deps.settings, lb, until).await,
        None => seal::sweep(&deps.store, &deps.events, deps.settings, until).await,
    }
}

pub async fn handle<S: ScoreStore, E: EventPublisher>(
    deps: &Deps<S, E>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError> {
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
    };
    invoke::answer(over_http, result.await, |report| report.done)
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::memory::{MemoryEvents, MemoryStore};

    use super::*;
    use leaderboard::http;
    use leaderboard::time::now_ms;

    fn invocation() -> Invocation {
        let mut inv = Invocation::default();
        inv.deadline = (now_ms() + 60_000) as u64;
        inv
    }

    #[tokio::test]
    async fn seals_on_schedule_and_names_a_board_that_cannot_be_sealed() {
        let deps = Deps {
            store: MemoryStore::default(),
            events: MemoryEvents::default(),
            settings: SealSettings::default(),
        };
        let scheduled = handle(&deps, LambdaEvent::new(serde_json::json!({}), invocation()))
            .await
            .unwrap();
        assert_eq!(scheduled["done"], true);
        assert_eq!(scheduled["boards"], serde_json::json!([]));
        let body = r#"{"leaderboard_id": "no:such:board"}"#;
        let req = http::request("POST /admin/seal", &[], &[], Some(body));
        let resp = handle(
            &deps,
            LambdaEvent::new(serde_json::to_value(req).unwrap(), invocation()),
        )
        .await
        .unwrap();
        assert_eq!(resp["statusCode"], 404);
        let unknown = serde_json::json!({"board": "x"});
        let err = handle(&deps, LambdaEvent::new(unknown, invocation()))
            .await
            .unwrap_err();
        assert_eq!(err.error_type(), "InvalidPayload");
    }
}
