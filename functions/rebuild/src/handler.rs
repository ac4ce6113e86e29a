//! Rebuilds rank indexes from DynamoDB. Three ways in, one payload
//! (`{leaderboard_id}` or `{all: true}`, optional `budget_ms`):
//! `POST /admin/rebuild` through API Gateway (200 when done, 202 when it must be invoked
//! again to finish), a direct invocation, and the schedule (`{all: true}` every minute),
//! which also finishes what an earlier invocation left in progress.

use std::time::{Duration, Instant};

use aws_lambda_events::event::apigw::ApiGatewayV2httpRequest;
use lambda_runtime::LambdaEvent;
use leaderboard::http;
use leaderboard::invoke::InvokeError;
use leaderboard::service::rebuild::{self, RebuildRequest};
use leaderboard::time::now_ms;
use leaderboard::wiring::AppContext;
use serde_json::Value;

/// Time kept free before the Lambda deadline to checkpoint and answer.
const MARGIN: Duration = Duration::from_secs(10);

fn deadline(event_deadline_ms: u64, budget_ms: Option<u64>) -> Instant {
    let left = (event_deadline_ms as i64 - now_ms()).max(0) as u64;
    let lambda = Duration::from_millis(left).saturating_sub(MARGIN);
    let budget = budget_ms.map_or(lambda, |b| lambda.min(Duration::from_millis(b)));
    Instant::now() + budget
}

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Value>) -> Result<Value, InvokeError> {
    let deadline_ms = event.context.deadline;
    if event.payload.get("requestContext").is_some() {
        let req: ApiGatewayV2httpRequest = serde_json::from_value(event.payload)?;
        let result = async {
            let body: RebuildRequest = http::json_body(&req)?;
            let until = deadline(deadline_ms, body.budget_ms);
            rebuild::run(ctx, body, until).await
        };
        let response = match result.await {
            Ok(report) => http::json(if report.done { 200 } else { 202 }, &report),
            Err(e) => http::error_response(&e),
        };
        return Ok(serde_json::to_value(response)?);
    }
    // A direct or scheduled invocation: the payload is the request itself.
    let req: RebuildRequest = serde_json::from_value(event.payload)?;
    let until = deadline(deadline_ms, req.budget_ms);
    let report = rebuild::run(ctx, req, until).await?;
    Ok(serde_json::to_value(report)?)
}
