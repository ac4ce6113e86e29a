//! Match results from event streams (game-server pods' Kafka topics, Kinesis): each
//! record is mapped by its source's [`Mapping`] to the canonical match result and
//! applied by `POST /scores`' use case ([`submit_match`]), so every window and receipt
//! works as over HTTP, and a redelivered record replays (its key is source + match id).
//!
//! A batch is applied one player at a time in order (records of a player keep their
//! order; a stream's partition key is the player id), players concurrently. A record
//! that can never apply (not JSON, unmappable, refused by the rules) goes to the
//! dead-letter destination with its reason; a fault of the backends stops that player's
//! records there, and the batch reports, per partition, the first record to deliver
//! again (the event source mapping's checkpoint): later records of other players that
//! were applied replay harmlessly when redelivered, and dead letters after that point
//! are left for the redelivery, so each is sent once.

use std::collections::{BTreeMap, HashMap};

use futures::future::join_all;
use tracing::{info, instrument, warn};

use super::Context;
use super::scores::{MatchReply, MatchResult, Outcome, Refusal, submit_match};
use crate::service::ServiceError;
use crate::store::{DeadLetter, DeadLetters, IngestStore, MappingStore, RankIndex};
use leaderboard_rules::mapping::Mapping;

/// One record of a stream batch.
#[derive(Debug, Clone)]
pub struct StreamRecord {
    /// Its partition: `{topic}-{partition}` on Kafka, the shard on Kinesis. Records of
    /// one partition come in order; a retry starts again from a record of it.
    pub partition: String,
    /// Where it stands in its partition (reported back on failure).
    pub position: String,
    /// The source whose mapping reads it (a topic's pod, a stream).
    pub source: String,
    /// The partition key (the player id): records with one key keep their order.
    pub key: String,
    pub payload: Vec<u8>,
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
    /// To send to the dead-letter destination (none at or after a partition's retry).
    pub dead_letters: Vec<DeadLetter>,
    /// Partition -> the position of its first record to deliver again.
    pub retry: BTreeMap<String, String>,
}

fn dead(
    record: &StreamRecord,
    mapping: Option<&Mapping>,
    code: &'static str,
    reason: String,
) -> RecordOutcome {
    RecordOutcome::DeadLetter(DeadLetter {
        source: record.source.clone(),
        partition: record.partition.clone(),
        position: record.position.clone(),
        code,
        reason,
        mapping_version: mapping.map(|m| m.version),
        payload: String::from_utf8_lossy(&record.payload).into_owned(),
    })
}

/// Maps and applies one record.
pub(crate) async fn ingest_record<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    mapping: Option<&Mapping>,
    record: &StreamRecord,
) -> RecordOutcome {
    let Some(m) = mapping else {
        let why = format!("no mapping is stored for source {}", record.source);
        return dead(record, None, "no_mapping", why);
    };
    let event: serde_json::Value = match serde_json::from_slice(&record.payload) {
        Ok(v) => v,
        Err(e) => return dead(record, mapping, "not_json", e.to_string()),
    };
    let body = match m.apply(&event) {
        Ok(body) => body,
        Err(why) => return dead(record, mapping, "unmappable", why.to_string()),
    };
    let result = match MatchResult::new(body) {
        Ok(r) => r,
        Err(e) => {
            let e = ServiceError::from(e);
            return dead(record, mapping, e.code(), e.to_string());
        }
    };
    match submit_match(ctx, result).await {
        // Every window refused it (closed, outside the season, a frozen board): nothing
        // counted, so it is kept with why rather than dropped. Some windows refusing is
        // what `POST /scores` answers 200 to, and applied.
        Ok(reply) => match refused_everywhere(&reply) {
            Some(first) => {
                let why = format!("every window refused it: {}", first.message);
                dead(record, mapping, first.code, why)
            }
            None => RecordOutcome::Applied(Box::new(reply)),
        },
        Err(e) if e.is_transient() => RecordOutcome::Retry(e),
        Err(e) => dead(record, mapping, e.code(), e.to_string()),
    }
}

fn refused_everywhere(reply: &MatchReply) -> Option<&Refusal> {
    let mut first = None;
    for r in &reply.results {
        match &r.outcome {
            Outcome::Refused { refused } => first = first.or(Some(refused)),
            Outcome::Accepted { .. } => return None,
        }
    }
    first
}

/// A stream batch from start to end: each source's current mapping read once (a change
/// applies from the next batch on), the records applied ([`ingest_batch`]), the ones that
/// can never apply kept in `dead_letters`, the batch counted. An error fails the whole
/// batch, to be delivered again (every record in it replays): a mapping that cannot be
/// read, or dead letters that cannot be kept (retried rather than lost).
pub async fn ingest_stream<S: IngestStore + MappingStore, I: RankIndex, D: DeadLetters>(
    ctx: &Context<S, I>,
    dead_letters: &D,
    records: &[StreamRecord],
) -> Result<BatchOutcome, ServiceError> {
    let mut mappings: HashMap<&str, Mapping> = HashMap::new();
    for r in records {
        if !mappings.contains_key(r.source.as_str())
            && let Some(m) = ctx.store.get_mapping(&r.source).await?
        {
            mappings.insert(&r.source, m);
        }
    }
    let out = ingest_batch(ctx, records, |s| mappings.get(s)).await;
    if !out.dead_letters.is_empty() {
        dead_letters.send(&out.dead_letters).await?;
    }
    crate::service::metrics::count(&[
        ("StreamRecordsApplied", out.applied),
        ("StreamDeadLetters", out.dead_letters.len() as u64),
        ("StreamPartitionsRetried", out.retry.len() as u64),
    ]);
    info!(
        records = records.len(),
        applied = out.applied,
        dead_letters = out.dead_letters.len(),
        retry = out.retry.len(),
        "batch done"
    );
    Ok(out)
}

/// Applies a batch: each key's records in order, keys concurrently. `mapping_of` gives
/// the mapping of a source (`None`: none is stored).
#[instrument(skip_all, fields(records = records.len()))]
pub async fn ingest_batch<'m, S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    records: &[StreamRecord],
    mapping_of: impl Fn(&str) -> Option<&'m Mapping>,
) -> BatchOutcome {
    // Lanes of (index in the batch, record) per key, in batch order.
    let mut by_key: BTreeMap<&str, Vec<(usize, &StreamRecord)>> = BTreeMap::new();
    for (i, r) in records.iter().enumerate() {
        by_key.entry(r.key.as_str()).or_default().push((i, r));
    }
    let lanes = by_key.into_values().map(|lane| {
        let mapping_of = &mapping_of;
        async move {
            let mut applied = 0;
            let mut letters = Vec::new();
            for &(i, record) in &lane {
                match ingest_record(ctx, mapping_of(&record.source), record).await {
                    RecordOutcome::Applied(_) => applied += 1,
                    RecordOutcome::DeadLetter(d) => letters.push((i, d)),
                    RecordOutcome::Retry(e) => {
                        warn!(error = %e, position = %record.position, "record to retry");
                        return (applied, letters, Some(i));
                    }
                }
            }
            (applied, letters, None)
        }
    });
    let mut out = BatchOutcome::default();
    let mut letters = Vec::new();
    // Partition -> the batch index of its first record to retry.
    let mut first_retry: HashMap<&str, usize> = HashMap::new();
    for (applied, lane_letters, retry) in join_all(lanes).await {
        out.applied += applied;
        letters.extend(lane_letters);
        if let Some(i) = retry {
            let at = first_retry.entry(&records[i].partition).or_insert(i);
            *at = (*at).min(i);
        }
    }
    let redelivered = |i: usize, d: &DeadLetter| {
        first_retry
            .get(d.partition.as_str())
            .is_some_and(|&from| i >= from)
    };
    letters.sort_by_key(|(i, _)| *i);
    out.dead_letters = letters
        .into_iter()
        .filter(|(i, d)| !redelivered(*i, d))
        .map(|(_, d)| d)
        .collect();
    out.retry = first_retry
        .into_iter()
        .map(|(p, i)| (p.to_owned(), records[i].position.clone()))
        .collect();
    out
}
