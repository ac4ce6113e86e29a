//! Repair queue batch -> each message decoded and repaired; the response names the
//! messages to keep (they come back after the queue's visibility timeout). A message
//! this function cannot read is kept too, so after the queue's receive limit it lands
//! in the failures queue (and its alarm) instead of vanishing.

use std::time::{Duration, Instant};

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::LambdaEvent;
use leaderboard::dynamodb::DynamoStreams;
use leaderboard::invoke::InvokeError;
use leaderboard::service::repair::{self, Handled, RepairMessage};
use leaderboard::time::now_ms;
use leaderboard::wiring::AppContext;
use tracing::error;

/// Time kept free before the Lambda deadline to answer.
const MARGIN: Duration = Duration::from_secs(2);

pub struct Deps {
    pub ctx: AppContext,
    pub stream: DynamoStreams,
}

pub async fn handle(
    deps: &Deps,
    event: LambdaEvent<SqsEvent>,
) -> Result<SqsBatchResponse, InvokeError> {
    let left = (event.context.deadline as i64 - now_ms()).max(0) as u64;
    let deadline = Instant::now() + Duration::from_millis(left).saturating_sub(MARGIN);
    let mut response = SqsBatchResponse::default();
    for message in event.payload.records {
        let id = message.message_id.unwrap_or_default();
        let decoded = serde_json::from_str::<RepairMessage>(message.body.as_deref().unwrap_or(""));
        let handled = match decoded {
            Ok(m) => repair::repair(&deps.ctx, &deps.stream, m, deadline).await,
            Err(e) => {
                error!(message_id = %id, error = %e, "a repair message this function cannot read; keeping it");
                Ok(Handled::Again)
            }
        };
        match handled {
            Ok(Handled::Done) => {}
            Ok(Handled::Again) => response.add_failure(id),
            Err(e) => {
                error!(message_id = %id, code = e.code(), chain = %leaderboard::error::error_chain(&e), "repair failed; keeping the message");
                response.add_failure(id);
            }
        }
    }
    Ok(response)
}
