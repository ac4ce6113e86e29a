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
use leaderboard::invoke::{InvokeError, work_until};
use leaderboard::service::Context;
use leaderboard::service::cache_plane;
use leaderboard::service::repair::{self, Handled, RepairMessage};
use leaderboard::store::{CachePlane, RankIndex, ScoreStore, StreamSource};
use serde_json::Value;
use tracing::error;

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
                    error!(%event, %source, code = e.code(), chain = %leaderboard::error::error_chain(&e), "could not mark the boards of a cache notification");
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
                error!(message_id = %id, code = e.code(), chain = %leaderboard::error::error_chain(&e), "repair failed; keeping the message");
                response.add_failure(id);
            }
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use aws_lambda_events::event::sqs::SqsMessage;
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::ids::LeaderboardId;
    use leaderboard::memory::{self, MemoryPlane, MemoryStore};
    use leaderboard::store::Health;

    use super::*;
    use leaderboard::time::now_ms;

    /// A batch of the repair queue: (message id, body) each, as Lambda sends it.
    fn batch(messages: &[(&str, &str)]) -> Value {
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
        serde_json::to_value(event).unwrap()
    }

    fn kept(resp: &Value) -> Vec<&str> {
        resp["batchItemFailures"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["itemIdentifier"].as_str().unwrap())
            .collect()
    }

    #[tokio::test]
    async fn rebuilds_a_reported_board_marks_all_stale_for_a_lost_range_and_keeps_garbage() {
        let deps = Deps {
            ctx: memory::context(),
            stream: MemoryStore::default(),
            plane: None::<MemoryPlane>,
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
        assert_eq!(kept(&resp), ["m2"]);
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
        assert!(kept(&resp).is_empty());
        let health = deps
            .ctx
            .index
            .health(std::slice::from_ref(&lb))
            .await
            .unwrap();
        assert_eq!(health, [Health::Stale]);
    }

    /// An ElastiCache notification as SNS hands it to Lambda.
    fn notification(message: &str) -> Value {
        serde_json::json!({"Records": [{
            "EventSource": "aws:sns",
            "EventVersion": "1.0",
            "EventSubscriptionArn": "arn:aws:sns:us-east-1:000000000000:rank-events:1",
            "Sns": {
                "Type": "Notification",
                "MessageId": "n1",
                "TopicArn": "arn:aws:sns:us-east-1:000000000000:rank-events",
                "Subject": null,
                "Message": message,
                "Timestamp": "2026-11-27T10:00:00.000Z",
                "SignatureVersion": "1",
                "Signature": "c2ln",
                "SigningCertUrl": "https://sns.us-east-1.amazonaws.com/cert.pem",
                "UnsubscribeUrl": "https://sns.us-east-1.amazonaws.com/unsub",
                "MessageAttributes": {}
            }
        }]})
    }

    #[tokio::test]
    async fn a_failover_marks_the_boards_of_its_shard_stale_and_no_other() {
        let plane = MemoryPlane::even("lb-rank", 3);
        let group = plane.0.clone().unwrap();
        let deps = Deps {
            ctx: memory::context(),
            stream: MemoryStore::default(),
            plane: Some(plane),
        };
        // Boards until two shards hold some: the failover is on the first board's shard.
        let mut boards = Vec::new();
        for i in 0..12 {
            boards.push(
                memory::seed(&deps.ctx, &format!("h:fo{i}"), Policy::Best, &[("a", 1)]).await,
            );
        }
        let shard_of = |lb: &LeaderboardId| {
            group
                .group_of(leaderboard::redis::board_slot(lb))
                .unwrap()
                .node_group_id
                .clone()
        };
        let hit = shard_of(&boards[0]);
        assert!(
            boards.iter().any(|lb| shard_of(lb) != hit),
            "every board on one shard"
        );
        let inv = Invocation::default();
        // A notification that loses nothing changes nothing.
        let calm = notification(r#"{"ElastiCache:SnapshotComplete":"lb-rank-0001-001"}"#);
        handle(&deps, LambdaEvent::new(calm, inv.clone()))
            .await
            .unwrap();
        let health = deps.ctx.index.health(&boards).await.unwrap();
        assert!(health.iter().all(|h| *h == Health::Ready), "{health:?}");
        let failover = notification(&format!(
            r#"{{"ElastiCache:FailoverComplete":"lb-rank-{hit}-002"}}"#
        ));
        handle(&deps, LambdaEvent::new(failover, inv.clone()))
            .await
            .unwrap();
        let health = deps.ctx.index.health(&boards).await.unwrap();
        for (lb, h) in boards.iter().zip(&health) {
            let want = if shard_of(lb) == hit {
                Health::Stale
            } else {
                Health::Ready
            };
            assert_eq!(*h, want, "{lb} on shard {}", shard_of(lb));
        }
        // A node id of another shape (cluster mode off): every board.
        let reboot = notification("ElastiCache:CacheNodesRebooted : lb-rank-001");
        handle(&deps, LambdaEvent::new(reboot, inv)).await.unwrap();
        let health = deps.ctx.index.health(&boards).await.unwrap();
        assert!(health.iter().all(|h| *h == Health::Stale), "{health:?}");
    }
}
