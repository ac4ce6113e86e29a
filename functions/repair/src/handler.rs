//! Two event sources, told apart by the records' `EventSource`:
//! - the repair queue (SQS): each message decoded and repaired; the response names the
//!   messages to keep (they come back after the queue's visibility timeout). A message
//!   this function cannot read is kept too, so after the queue's receive limit it lands
//!   in the failures queue (and its alarm) instead of vanishing;
//! - the rank index's ElastiCache notifications (SNS): after a failover, a node
//!   replacement or a reboot, the boards on the affected shard's slots are marked stale
//!   and reported for rebuild (`service::cache_plane::on_notice`). A failure is returned, so
//!   SNS delivers the notification again.

use std::time::Duration;

use aws_lambda_events::event::sns::SnsEvent;
use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::{InvokeError, work_until};
use leaderboard_core::service::Context;
use leaderboard_core::service::cache_plane;
use leaderboard_core::service::repair::{self, Handled, RepairMessage};
use leaderboard_core::store::{CachePlane, RankIndex, ScoreStore, StreamSource};
use serde_json::Value;
use tracing::error;

#[cfg(test)]
mod tests;

/// Time kept free before the Lambda deadline to answer.
const MARGIN: Duration = Duration::from_secs(2);

pub struct Deps<S, I, T, P> {
    pub ctx: Context<S, I>,
    pub stream: T,
    /// The rank index's control plane (its slot map), when the deployment names one.
    pub plane: Option<P>,
}

/// Whether the event is SNS's (its records name `aws:sns`; SQS's say `aws:sqs`).
fn from_sns(event: &Value) -> bool {
    event["Records"][0]["EventSource"] == "aws:sns"
}

pub async fn handle<S: ScoreStore, I: RankIndex, T: StreamSource, P: CachePlane>(
    deps: &Deps<S, I, T, P>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError> {
    let (payload, context) = (event.payload, event.context);
    if from_sns(&payload) {
        let sns: SnsEvent = serde_json::from_value(payload)?;
        for record in sns.records {
            for (event, source) in cache_plane::notices(&record.sns.message) {
                let noticed = Box::pin(cache_plane::on_notice(
                    &deps.ctx,
                    deps.plane.as_ref(),
                    &event,
                    &source,
                ))
                .await;
                if let Err(e) = noticed {
                    error!(%event, %source, code = e.code(), chain = %leaderboard_rules::error::error_chain(&e), "could not mark the boards of a cache notification");
                    return Err(InvokeError::from(e));
                }
            }
        }
        return Ok(Value::Null);
    }
    let sqs: SqsEvent = serde_json::from_value(payload)?;
    let response = repair_batch(deps, LambdaEvent::new(sqs, context)).await;
    Ok(serde_json::to_value(response)?)
}

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
async fn repair_batch<S: ScoreStore, I: RankIndex, T: StreamSource, P>(
    deps: &Deps<S, I, T, P>,
    event: LambdaEvent<SqsEvent>,
) -> SqsBatchResponse {
    let deadline = work_until(event.context.deadline, MARGIN, None);
    let mut response = SqsBatchResponse::default();
    for message in event.payload.records {
        let id = message.message_id.unwrap_or_default();
        let decoded = serde_json::from_str::<RepairMessage>(message.body.as_deref().unwrap_or(""));
        let handled = match decoded {
            Ok(m) => Box::pin(repair::repair(&deps.ctx, &deps.stream, m, deadline)).await,
            Err(e) => {
                error!(message_id = %id, error = %e, "a repair message this function cannot read; keeping it");
                Ok(Handled::Again)
            }
        };
        match handled {
            Ok(Handled::Done) => {}
            Ok(Handled::Again) => response.add_failure(id),
            Err(e) => {
                error!(message_id = %id, code = e.code(), chain = %leaderboard_rules::error::error_chain(&e), "repair failed; keeping the message");
                response.add_failure(id);
            }
        }
    }
    response
}
