//! The long jobs this function runs because they walk a board in rank order as a seal
//! does: exports (`leaderboard_core::service::export`) and board resets
//! (`leaderboard_core::service::seal::reset`). Two ways in: the operators' routes
//! through API Gateway (`POST /leaderboards/{lb}/exports` asks for an export and answers
//! 202 at once, `GET /leaderboards/{lb}/exports[/{id}]` reads where they are, with the
//! file's link once done; `POST /leaderboards/{lb}/reset` and
//! `POST /families/{game}/{mode}/reset` reset boards now, 202), and the jobs' queue's
//! messages, one turn of a job each: the run goes on until the Lambda deadline less
//! [`super::MARGIN`], then hands the job on.

use std::convert::Infallible;

use lambda_runtime::LambdaEvent;
use leaderboard::edge::http::{self, Request};
use leaderboard::edge::invoke::{InvokeError, work_until};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::export::{self, ExportSettings};
use leaderboard_core::service::operator::{Operator, Reason};
use leaderboard_core::service::seal::reset::{self, ResetSettings};
use leaderboard_core::store::{
    EventPublisher, ExportFiles, ExportStore, JobQueue, JobTurn, ScoreStore,
};
use leaderboard_rules::export::export_id;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::ids::parse_slug;
use serde_json::Value;

/// The jobs' ports and tunables.
pub struct Jobs<F, Q> {
    pub files: F,
    pub queue: Q,
    pub exports: ExportSettings,
    pub resets: ResetSettings,
}

/// Whether `payload` is the jobs' queue's batch or one of the jobs' routes.
pub(super) fn is_job(payload: &Value) -> bool {
    let queued = payload["Records"][0]["eventSource"] == "aws:sqs";
    let route = payload["routeKey"].as_str().unwrap_or_default();
    queued
        || route.starts_with("POST /leaderboards/")
        || route.starts_with("GET /leaderboards/")
        || route.starts_with("POST /families/")
}

pub(super) async fn handle<S, E, F, Q>(
    (store, events): (&S, &E),
    jobs: &Jobs<F, Q>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError>
where
    S: ScoreStore + ExportStore,
    E: EventPublisher,
    F: ExportFiles,
    Q: JobQueue,
{
    let (payload, context) = event.into_parts();
    if payload.get("requestContext").is_some() {
        let req: Request = serde_json::from_value(payload)?;
        let event = LambdaEvent::new(req, context);
        let resp = Box::pin(routed(store, jobs, &event)).await;
        return Ok(serde_json::to_value(resp)?);
    }
    for record in payload["Records"].as_array().into_iter().flatten() {
        // A message that names no job fails the batch: after its retries it is kept in
        // JobFailures (alarmed).
        let text = record["body"].as_str().unwrap_or_default();
        let until = work_until(context.deadline, super::MARGIN, None);
        match serde_json::from_str(text)? {
            JobTurn::Export(turn) => {
                let deps = (store, &jobs.files, &jobs.queue);
                Box::pin(export::run(deps, jobs.exports, &turn, until)).await?;
            }
            JobTurn::Reset(turn) => {
                let deps = (store, events, &jobs.queue);
                Box::pin(reset::run(deps, jobs.resets, &turn, until)).await?;
            }
        }
    }
    Ok(serde_json::json!({}))
}

async fn routed<S, F, Q>(
    store: &S,
    jobs: &Jobs<F, Q>,
    event: &LambdaEvent<Request>,
) -> http::Response
where
    S: ScoreStore + ExportStore,
    F: ExportFiles,
    Q: JobQueue,
{
    let settings = jobs.exports;
    let lb = |req: &Request| http::path(req, "lb", LeaderboardId::parse);
    let read = (store, &jobs.files);
    let asked = |req: &Request| -> Result<_, leaderboard_core::service::ServiceError> {
        Ok((
            Operator(http::operator(req)),
            Reason::parse(body::json_body(req)?)?,
        ))
    };
    let result = reply::routed::<Infallible>(event, async |req, route| match route {
        "POST /leaderboards/{lb}/exports" => {
            reply::reply(202, async {
                let lb = lb(req)?;
                let (op, reason) = asked(req)?;
                let deps = (store, &jobs.files, &jobs.queue);
                export::start(deps, settings, &op, &lb, reason).await
            })
            .await
        }
        "POST /leaderboards/{lb}/reset" => {
            reply::reply(202, async {
                let lb = lb(req)?;
                let (op, reason) = asked(req)?;
                reset::start((store, &jobs.queue), jobs.resets, &op, &lb, reason).await
            })
            .await
        }
        "POST /families/{game}/{mode}/reset" => {
            reply::reply(202, async {
                let game = http::path(req, "game", |g| parse_slug("game", g))?;
                let mode = http::path(req, "mode", |m| parse_slug("mode", m))?;
                let (op, reason) = asked(req)?;
                let family = (game.as_str(), mode.as_str());
                let deps = (store, &jobs.queue);
                reset::start_family(deps, jobs.resets, &op, family, reason).await
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
