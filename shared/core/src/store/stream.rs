//! The table's stream as the use cases see it: batches of standings to project, and the
//! stream read again for a range a batch gave up on.

use std::future::Future;

use super::{IndexEntry, VersionedCard};
use crate::store::StoreError;
use leaderboard_rules::ids::PlayerId;

/// A batch of stream records decoded: the standings, in stream order, each with its
/// record's sequence number (what a retry names), the players' cards written (their
/// profiles, each with its record's sequence number), and how many records were
/// neither (boards, receipts) or could not be decoded (poison).
#[derive(Debug, Default)]
pub struct StreamBatch {
    pub entries: Vec<IndexEntry>,
    pub sequence_numbers: Vec<Option<String>>,
    pub cards: Vec<(PlayerId, VersionedCard)>,
    pub card_sequence_numbers: Vec<Option<String>>,
    /// Results held for review (their queue items' inserts): `leaderboard.result.held`.
    pub held: Vec<super::HeldResult>,
    pub held_sequence_numbers: Vec<Option<String>>,
    pub skipped: usize,
    pub poison: usize,
    /// When the oldest record of the batch was written (its `ApproximateCreationDateTime`,
    /// epoch ms): how far the stream's reader is behind (`StreamLagSeconds`). `None` for
    /// a range read again by the repair.
    pub oldest_at_ms: Option<i64>,
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
    /// The standings of `range`, oldest first, decoded as the projector decodes a
    /// batch; `None` when the range can no longer be read (trimmed after the stream's 24
    /// hours, or the shard is gone).
    fn read_range(
        &self,
        range: &StreamRange,
    ) -> impl Future<Output = Result<Option<StreamBatch>, StoreError>> + Send;
}
