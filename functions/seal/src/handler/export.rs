//! Exports (`leaderboard_core::service::export`), written by this function because they
//! walk a board in rank order as a seal does. Two ways in: the operators' routes through
//! API Gateway (`POST /leaderboards/{lb}/exports` asks for one and answers 202 at once,
//! `GET /leaderboards/{lb}/exports[/{id}]` reads where they are, with the file's link
//! once done), and the export queue's messages, one turn of a job each: the run goes
//! on until the Lambda deadline less [`super::MARGIN`], then hands the job on.

use std::convert::Infallible;

use lambda_runtime::LambdaEvent;
use leaderboard::edge::http::{self, Request};
use leaderboard::edge::invoke::{InvokeError, work_until};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::export::{self, ExportSettings};
use leaderboard_core::service::operator::{Operator, Reason};
use leaderboard_core::store::{ExportFiles, ExportStore, ExportTurn, JobQueue, ScoreStore};
use leaderboard_rules::export::export_id;
use leaderboard_rules::ids::LeaderboardId;
use serde_json::Value;

/// The exports' ports.
pub struct Exports<F, Q> {
    pub files: F,
    pub queue: Q,
    pub settings: ExportSettings,
}

/// Whether `payload` is the export queue's batch or one of the exports' routes.
pub(super) fn is_export(payload: &Value) -> bool {
    let queued = payload["Records"][0]["eventSource"] == "aws:sqs";
    let route = payload["routeKey"].as_str().unwrap_or_default();
    queued || route.starts_with("POST /leaderboards/") || route.starts_with("GET /leaderboards/")
}

pub(super) async fn handle<S, F, Q>(
    store: &S,
    exports: &Exports<F, Q>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError>
where
    S: ScoreStore + ExportStore,
    F: ExportFiles,
    Q: JobQueue,
{
    let (payload, context) = event.into_parts();
    if payload.get("requestContext").is_some() {
        let req: Request = serde_json::from_value(payload)?;
        let event = LambdaEvent::new(req, context);
        let resp = Box::pin(routed(store, exports, &event)).await;
        return Ok(serde_json::to_value(resp)?);
    }
    let deps = (store, &exports.files, &exports.queue);
    for record in payload["Records"].as_array().into_iter().flatten() {
        // A message that names no export fails the batch: after its retries it is kept
        // in JobFailures (alarmed).
        let text = record["body"].as_str().unwrap_or_default();
        let turn: ExportTurn = serde_json::from_str(text)?;
        let until = work_until(context.deadline, super::MARGIN, None);
        Box::pin(export::run(deps, exports.settings, &turn, until)).await?;
    }
    Ok(serde_json::json!({}))
}

async fn routed<S, F, Q>(
    store: &S,
    exports: &Exports<F, Q>,
    event: &LambdaEvent<Request>,
) -> http::Response
where
    S: ScoreStore + ExportStore,
    F: ExportFiles,
    Q: JobQueue,
{
    let settings = exports.settings;
    let lb = |req: &Request| http::path(req, "lb", LeaderboardId::parse);
    let read = (store, &exports.files);
    let result = reply::routed::<Infallible>(event, async |req, route| match route {
        "POST /leaderboards/{lb}/exports" => {
            reply::reply(202, async {
                let lb = lb(req)?;
                let reason = Reason::parse(body::json_body(req)?)?;
                let op = Operator(http::operator(req));
                let deps = (store, &exports.files, &exports.queue);
                export::start(deps, settings, &op, &lb, reason).await
            })
            .await
        }
        "GET /leaderboards/{lb}/exports" => {
            reply::reply(200, async { export::list(read, settings, &lb(req)?).await }).await
        }
        "GET /leaderboards/{lb}/exports/{id}" => {
            reply::reply(200, async {
                let id = http::path(req, "id", export_id)?;
                export::view(read, settings, &lb(req)?, &id).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await;
    result.unwrap_or_else(|never| match never {})
}
