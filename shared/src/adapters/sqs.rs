//! `SqsRepairQueue`: boards whose index needs a rebuild, reported to the repair queue
//! (`REPAIR_QUEUE_URL`), the same queue the stream's event source mapping sends exhausted
//! batches to. The repair function consumes it. `SqsDeadLetters`: stream records that can
//! never apply (`DEAD_LETTER_QUEUE_URL`). `SqsJobQueue`: exports and resets handed to a run of their
//! own (`EXPORT_QUEUE_URL`).

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;

use aws_sdk_sqs::types::SendMessageBatchRequestEntry;
use leaderboard_core::store::QueueError;

use leaderboard_core::store::{
    DeadLetter, DeadLetterCount, DeadLetters, JobQueue, JobTurn, RebuildNeeded, RepairQueue,
    StoreError,
};

/// The SQS adapter of [`RepairQueue`].
#[derive(Clone)]
pub(crate) struct SqsRepairQueue {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl SqsRepairQueue {
    pub fn new(client: aws_sdk_sqs::Client, url: impl Into<String>) -> Self {
        Self {
            client,
            url: url.into(),
        }
    }
}

impl RepairQueue for SqsRepairQueue {
    fn report<'a>(&'a self, need: &'a RebuildNeeded) -> BoxFuture<'a, Result<(), QueueError>> {
        async move {
            let body = serde_json::to_string(need)?;
            self.client
                .send_message()
                .queue_url(&self.url)
                .message_body(body)
                .send()
                .await
                .map_err(|e| QueueError::Call {
                    op: "SendMessage",
                    source: Box::new(e),
                })?;
            Ok(())
        }
        .boxed()
    }
}

/// The SQS adapter of [`JobQueue`] (`EXPORT_QUEUE_URL`): one message per turn, which
/// invokes the exporting function.
#[derive(Clone)]
pub struct SqsJobQueue {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl SqsJobQueue {
    pub fn new(client: aws_sdk_sqs::Client, url: impl Into<String>) -> Self {
        Self {
            client,
            url: url.into(),
        }
    }
}

impl JobQueue for SqsJobQueue {
    async fn hand_on(&self, turn: &JobTurn, delay: Duration) -> Result<(), StoreError> {
        let body = serde_json::to_string(turn).map_err(StoreError::item)?;
        self.client
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .delay_seconds(delay.as_secs().min(900) as i32)
            .send()
            .await
            .map_err(|e| StoreError::call("SendMessage(job)", e))?;
        Ok(())
    }
}

/// The SQS adapter of [`DeadLetters`] (`DEAD_LETTER_QUEUE_URL`): one message per dead
/// letter (its JSON), sent ten to a `SendMessageBatch` call.
#[derive(Clone)]
pub struct SqsDeadLetters {
    client: aws_sdk_sqs::Client,
    url: String,
}

impl SqsDeadLetters {
    pub fn new(client: aws_sdk_sqs::Client, url: impl Into<String>) -> Self {
        Self {
            client,
            url: url.into(),
        }
    }
}

impl DeadLetters for SqsDeadLetters {
    async fn send(&self, letters: &[DeadLetter]) -> Result<(), QueueError> {
        for chunk in letters.chunks(10) {
            let mut entries = Vec::with_capacity(chunk.len());
            for (i, letter) in chunk.iter().enumerate() {
                let entry = SendMessageBatchRequestEntry::builder()
                    .id(i.to_string())
                    .message_body(serde_json::to_string(letter)?)
                    .build()
                    .map_err(|e| QueueError::Call {
                        op: "SendMessageBatch",
                        source: Box::new(e),
                    })?;
                entries.push(entry);
            }
            let out = self
                .client
                .send_message_batch()
                .queue_url(&self.url)
                .set_entries(Some(entries))
                .send()
                .await
                .map_err(|e| QueueError::Call {
                    op: "SendMessageBatch",
                    source: Box::new(e),
                })?;
            if let Some(failed) = out.failed.first() {
                return Err(QueueError::Call {
                    op: "SendMessageBatch",
                    source: format!("entry {} refused: {}", failed.id, failed.code).into(),
                });
            }
        }
        Ok(())
    }
    async fn count(&self) -> Result<DeadLetterCount, QueueError> {
        use aws_sdk_sqs::types::QueueAttributeName as A;
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(A::ApproximateNumberOfMessages)
            .attribute_names(A::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .map_err(|e| QueueError::Call {
                op: "GetQueueAttributes",
                source: Box::new(e),
            })?;
        let attrs = out.attributes();
        let number = |name: A| {
            attrs
                .and_then(|a| a.get(&name))
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Ok(DeadLetterCount {
            waiting: number(A::ApproximateNumberOfMessages),
            in_flight: number(A::ApproximateNumberOfMessagesNotVisible),
        })
    }
}
