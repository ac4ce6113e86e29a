//! Repair queue batch -> each message decoded and repaired; the response names the
//! messages to keep (they come back after the queue's visibility timeout). A message
//! this function cannot read is kept too, so after the queue's receive limit it lands
//! in the failures queue (and its alarm) instead of vanishing.

use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use lambda_runtime::LambdaEvent;
use leaderboard::invoke::{InvokeError, work_until};
use leaderboard::service::Context;
use leaderboard::service::repair::{self, Handled, RepairMessage};
use leaderboard::store::{RankIndex, ScoreStore, StreamSource};
use tracing::error;

/// Time kept free before the Lambda deadline to answer.
const MARGIN: Duration = Duration::from_secs(2);

pub struct Deps<S, I, T> {
    pub ctx: Context<S, I>,
    pub stream: T,
}

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex, T: StreamSource>(
    deps: &Deps<S, I, T>,
    event: LambdaEvent<SqsEvent>,
) -> Result<SqsBatchResponse, InvokeError> {
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
                error!(message_id = %id, code = e.code(), chain = %leaderboard::error::error_chain(&e), "repair failed; keeping the message");
                response.add_failure(id);
            }
        }
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use aws_lambda_events::event::sqs::SqsMessage;
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::memory::{self, MemoryStore};
    use leaderboard::store::Health;

    use super::*;
    use leaderboard::time::now_ms;

    /// A batch of the repair queue: (message id, body) each.
    fn batch(messages: &[(&str, &str)]) -> SqsEvent {
        let mut event = SqsEvent::default();
        event.records = messages
            .iter()
            .map(|(id, body)| {
                let mut m = SqsMessage::default();
                m.message_id = Some((*id).into());
                m.body = Some((*body).into());
                m
            })
            .collect();
        event
    }

    #[tokio::test]
    async fn rebuilds_a_reported_board_marks_all_stale_for_a_lost_range_and_keeps_garbage() {
        let deps = Deps {
            ctx: memory::context(),
            stream: MemoryStore::default(),
        };
        let lb = memory::seed(&deps.ctx, "h:repair", Policy::Best, &[("a", 1)]).await;
        deps.ctx.index.wipe(&lb);
        let event = batch(&[
            ("m1", r#"{"rebuild": "h:repair", "health": "missing"}"#),
            ("m2", "not a repair message"),
        ]);
        let mut inv = Invocation::default();
        inv.deadline = (now_ms() + 30_000) as u64;
        let resp = handle(&deps, LambdaEvent::new(event, inv.clone()))
            .await
            .unwrap();
        let kept: Vec<_> = resp
            .batch_item_failures
            .iter()
            .map(|f| f.item_identifier.clone())
            .collect();
        assert_eq!(kept, ["m2"]);
        let health = deps
            .ctx
            .index
            .health(std::slice::from_ref(&lb))
            .await
            .unwrap();
        assert_eq!(health, [Health::Ready]);
        // A range the stream no longer has: every board is marked stale.
        deps.stream.trim_stream(10);
        let lost = r#"{"DDBStreamBatchInfo": {"shardId": "s", "startSequenceNumber": "1",
            "endSequenceNumber": "5", "streamArn": "arn"}}"#;
        let resp = handle(&deps, LambdaEvent::new(batch(&[("m3", lost)]), inv))
            .await
            .unwrap();
        assert!(resp.batch_item_failures.is_empty());
        let health = deps
            .ctx
            .index
            .health(std::slice::from_ref(&lb))
            .await
            .unwrap();
        assert_eq!(health, [Health::Stale]);
    }
}
