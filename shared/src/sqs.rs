//! `SqsRepairQueue`: boards whose index needs a rebuild, reported to the repair queue
//! (`REPAIR_QUEUE_URL`), the same queue the stream's event source mapping sends exhausted
//! batches to. The repair function consumes it.

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::error::QueueError;
use crate::store::{RebuildNeeded, RepairQueue};

/// The SQS adapter of [`RepairQueue`].
#[derive(Clone)]
pub struct SqsRepairQueue {
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
                .map_err(|e| QueueError::Sqs {
                    op: "SendMessage",
                    source: Box::new(e),
                })?;
            Ok(())
        }
        .boxed()
    }
}
