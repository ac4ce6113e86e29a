//! Match results from event streams (game-server pods' Kafka topics, Kinesis): each
//! record is mapped by its source's [`Mapping`] to the canonical match result and
//! applied by `POST /scores`' use case ([`submit_match`]), so every window and receipt
//! works as over HTTP, and a redelivered record replays (its key is source + match id).
//!
//! A batch is applied one player at a time in order (records of a player keep their
//! order; a stream's partition key is the player id), players concurrently. A record
//! that can never apply (not JSON, unmappable, refused by the rules) goes to the
//! dead-letter destination with its reason; a fault of the backends stops that player's
//! records there, to be retried from the first of them (later records of other players
//! that were applied replay harmlessly when redelivered).

use std::collections::BTreeMap;

use futures::future::join_all;
use serde::Serialize;
use tracing::{instrument, warn};

use super::Context;
use super::scores::{MatchReply, MatchResult, submit_match};
use crate::error::ServiceError;
use crate::mapping::Mapping;
use crate::store::{RankIndex, ScoreStore};

/// One record of a stream batch.
#[derive(Debug, Clone)]
pub struct StreamRecord {
    /// Where it stands in its partition or shard (reported back on failure).
    pub position: String,
    /// The source whose mapping reads it (a topic's pod, a stream).
    pub source: String,
    /// The partition key (the player id): records with one key keep their order.
    pub key: String,
    pub payload: Vec<u8>,
}

/// A record that can never apply, with why: what the dead-letter destination keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeadLetter {
    pub source: String,
    pub position: String,
    /// A stable code: `not_json`, `no_mapping`, `unmappable`, or the rules' error code.
    pub code: &'static str,
    pub reason: String,
    /// The raw event, as text (invalid UTF-8 replaced).
    pub payload: String,
}

/// What became of one record.
#[derive(Debug)]
pub enum RecordOutcome {
    /// Applied (or replayed) on every window it counts in.
    Applied(Box<MatchReply>),
    DeadLetter(DeadLetter),
    /// A backend fault: retry it (and the player's later records).
    Retry(ServiceError),
}

/// What a batch came to.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    pub applied: u64,
    pub dead_letters: Vec<DeadLetter>,
    /// Positions to retry (each player's first failed record and those after it).
    pub retry: Vec<String>,
}

fn dead(record: &StreamRecord, code: &'static str, reason: String) -> RecordOutcome {
    RecordOutcome::DeadLetter(DeadLetter {
        source: record.source.clone(),
        position: record.position.clone(),
        code,
        reason,
        payload: String::from_utf8_lossy(&record.payload).into_owned(),
    })
}

/// Maps and applies one record.
pub async fn ingest_record<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    mapping: Option<&Mapping>,
    record: &StreamRecord,
) -> RecordOutcome {
    let Some(mapping) = mapping else {
        let why = format!("no mapping is stored for source {}", record.source);
        return dead(record, "no_mapping", why);
    };
    let event: serde_json::Value = match serde_json::from_slice(&record.payload) {
        Ok(v) => v,
        Err(e) => return dead(record, "not_json", e.to_string()),
    };
    let body = match mapping.apply(&event) {
        Ok(body) => body,
        Err(why) => return dead(record, "unmappable", why.to_string()),
    };
    let result = match MatchResult::new(body) {
        Ok(r) => r,
        Err(e) => {
            let e = ServiceError::from(e);
            return dead(record, e.code(), e.to_string());
        }
    };
    match submit_match(ctx, result).await {
        Ok(reply) => RecordOutcome::Applied(Box::new(reply)),
        Err(e) if e.is_transient() => RecordOutcome::Retry(e),
        Err(e) => dead(record, e.code(), e.to_string()),
    }
}

/// Applies a batch: each key's records in order, keys concurrently. `mapping_of` gives
/// the mapping of a source (`None`: none is stored).
#[instrument(skip_all, fields(records = records.len()))]
pub async fn ingest_batch<'m, S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    records: &[StreamRecord],
    mapping_of: impl Fn(&str) -> Option<&'m Mapping>,
) -> BatchOutcome {
    let mut by_key: BTreeMap<&str, Vec<&StreamRecord>> = BTreeMap::new();
    for r in records {
        by_key.entry(r.key.as_str()).or_default().push(r);
    }
    let lanes = by_key.into_values().map(|lane| {
        let mapping_of = &mapping_of;
        async move {
            let mut out = BatchOutcome::default();
            for (i, record) in lane.iter().enumerate() {
                match ingest_record(ctx, mapping_of(&record.source), record).await {
                    RecordOutcome::Applied(_) => out.applied += 1,
                    RecordOutcome::DeadLetter(d) => out.dead_letters.push(d),
                    RecordOutcome::Retry(e) => {
                        warn!(error = %e, position = %record.position, "record to retry");
                        out.retry = lane[i..].iter().map(|r| r.position.clone()).collect();
                        break;
                    }
                }
            }
            out
        }
    });
    let mut total = BatchOutcome::default();
    for lane in join_all(lanes).await {
        total.applied += lane.applied;
        total.dead_letters.extend(lane.dead_letters);
        total.retry.extend(lane.retry);
    }
    total
}
