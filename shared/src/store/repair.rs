//! The repair's ports: the queue boards needing a rebuild are reported to, and the
//! table's stream read again for a range a batch gave up on.

use std::future::Future;

use super::Health;
use crate::error::{QueueError, StoreError};
use crate::ids::LeaderboardId;

/// A board whose rank index needs a rebuild, as reported to the repair queue (the body
/// of one SQS message).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RebuildNeeded {
    pub rebuild: LeaderboardId,
    /// The index health the reporter saw.
    pub health: Health,
}

/// Where boards whose index needs a rebuild are reported (the repair queue). Boxed
/// futures: the port is optional in a [`crate::service::Context`] and held as a trait
/// object there.
pub trait RepairQueue: Send + Sync {
    fn report<'a>(
        &'a self,
        need: &'a RebuildNeeded,
    ) -> futures::future::BoxFuture<'a, Result<(), QueueError>>;
}

/// Where a range of the table's stream is (what a failed batch's on-failure record
/// names): one shard, from `start` to `end` inclusive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreamRange {
    pub stream_arn: String,
    pub shard_id: String,
    pub start: String,
    pub end: String,
}

/// The table's stream, read again by the repair.
pub trait StreamSource: Send + Sync {
    /// The records of `range`, oldest first, as Lambda would deliver them; `None` when
    /// they can no longer be read (trimmed after the stream's 24 hours, or the shard is
    /// gone).
    fn read_range(
        &self,
        range: &StreamRange,
    ) -> impl Future<
        Output = Result<Option<Vec<aws_lambda_events::event::dynamodb::EventRecord>>, StoreError>,
    > + Send;
}
