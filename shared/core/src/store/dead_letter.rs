//! The dead-letter destination of stream ingest: records that can never apply, each
//! with why and its raw payload, kept for an operator to read and replay.

use std::future::Future;

use serde::Serialize;

use crate::store::QueueError;

/// A record that can never apply, with why: what the dead-letter destination keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadLetter {
    pub source: String,
    /// The record's partition (`{topic}-{partition}`, a Kinesis shard).
    pub partition: String,
    /// Where it stands in its partition (a Kafka offset, a Kinesis sequence number).
    pub position: String,
    /// A stable code: `not_json`, `no_mapping`, `unmappable`, or the rules' error code.
    pub code: &'static str,
    pub reason: String,
    /// The version of the mapping that read it (absent with `no_mapping`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping_version: Option<u64>,
    /// The raw event, as text (invalid UTF-8 replaced).
    pub payload: String,
}

/// Where dead letters go. Delivery is at least once: a batch retried after a partial
/// send sends its letters again (a consumer tells them apart by partition and position).
pub trait DeadLetters: Send + Sync {
    fn send(&self, letters: &[DeadLetter]) -> impl Future<Output = Result<(), QueueError>> + Send;

    /// How many letters wait to be read, and how many a reader holds right now (SQS's
    /// approximate counts).
    fn count(&self) -> impl Future<Output = Result<DeadLetterCount, QueueError>> + Send;
}

/// What the dead-letter destination holds: `GET /admin/dead-letters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DeadLetterCount {
    pub waiting: u64,
    pub in_flight: u64,
}
