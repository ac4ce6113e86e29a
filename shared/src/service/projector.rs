//! The stream projector: DynamoDB stream records in, version-checked index applies out.
//!
//! Only standing items (`kind = "standing"`) project; boards and receipts are skipped.
//! A record whose image cannot be decoded is poison: retrying cannot fix it, so it is
//! skipped with an error log and counted (the `ProjectorPoisonRecords` metric), never
//! allowed to block the shard. If the index fails, every record of the batch that
//! carried a standing is reported in `batch_item_failures`, and Lambda retries from the
//! first of them; applies are absolute and version-checked, so re-applying is harmless.
//! A batch that exhausts its retries goes to the repair queue, whose consumer reads the
//! range again (see [`super::repair`]). Boards whose index turns out not ready are
//! reported for repair.
//!
//! Standings are never deleted by the service; a REMOVE (an operator's manual delete) is
//! left to the rebuild to reconcile.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};
use tracing::{error, info, instrument};

use super::repair::Reporter;
use crate::dynamodb::StandingItem;
use crate::store::{IndexEntry, RankIndex};

/// What one record asks of the index.
#[derive(Debug)]
enum Change {
    Apply(IndexEntry),
    Skip,
    Poison(String),
}

fn change_of(event_name: &str, image: serde_dynamo::Item) -> Change {
    if !matches!(event_name, "INSERT" | "MODIFY") {
        return Change::Skip;
    }
    let standing = matches!(
        image.get("kind"),
        Some(serde_dynamo::AttributeValue::S(k)) if k == StandingItem::KIND
    );
    if !standing {
        return Change::Skip;
    }
    // The image is owned: decoded in place, never copied.
    match serde_dynamo::from_item::<_, StandingItem>(image) {
        Ok(item) => Change::Apply(item.index_entry()),
        Err(e) => Change::Poison(e.to_string()),
    }
}

/// Counts of one batch, logged once per invocation.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    pub applied: usize,
    pub stale: usize,
    pub skipped: usize,
    pub poison: usize,
    pub failed: usize,
}

/// A batch's standings, in stream order, with the sequence number of each.
#[derive(Debug, Default)]
pub struct Decoded {
    pub entries: Vec<IndexEntry>,
    pub sequence_numbers: Vec<Option<String>>,
    /// `skipped` and `poison` counted.
    pub stats: BatchStats,
}

/// Picks the standings out of stream records (skipping other items and logging poison).
pub fn decode(records: Vec<EventRecord>) -> Decoded {
    let mut out = Decoded::default();
    for record in records {
        let EventRecord {
            event_id,
            event_name,
            change,
            ..
        } = record;
        let sequence_number = change.sequence_number;
        match change_of(&event_name, change.new_image) {
            Change::Apply(entry) => {
                out.entries.push(entry);
                out.sequence_numbers.push(sequence_number);
            }
            Change::Skip => out.stats.skipped += 1,
            Change::Poison(reason) => {
                out.stats.poison += 1;
                error!(
                    %event_id,
                    sequence_number = sequence_number.as_deref().unwrap_or("?"),
                    %reason,
                    poison = true,
                    "skipping a stream record that cannot be decoded"
                );
            }
        }
    }
    out
}

/// Applies a stream batch to the index; the response names the records to retry.
#[instrument(skip_all, fields(records = event.records.len()))]
pub async fn project<I: RankIndex>(
    index: &I,
    repairs: &Reporter,
    event: Event,
) -> (DynamoDbEventResponse, BatchStats) {
    let Decoded {
        entries,
        sequence_numbers,
        mut stats,
    } = decode(event.records);
    let mut response = DynamoDbEventResponse::default();
    match index.apply_many(&entries).await {
        Ok(batch) => {
            stats.applied = batch.applied.iter().filter(|a| **a).count();
            stats.stale = batch.applied.len() - stats.applied;
            for (board, health) in &batch.unready {
                repairs.report(index, board, *health).await;
            }
        }
        Err(e) => {
            stats.failed = sequence_numbers.len();
            error!(error = %e, source = ?std::error::Error::source(&e), failed = stats.failed, "index apply failed; reporting the batch for retry");
            response.batch_item_failures = sequence_numbers
                .into_iter()
                .map(|seq| {
                    let mut failure = DynamoDbBatchItemFailure::default();
                    failure.item_identifier = seq;
                    failure
                })
                .collect();
        }
    }
    crate::metrics::count(&[
        ("ProjectorApplied", stats.applied as u64),
        ("ProjectorStale", stats.stale as u64),
        ("ProjectorPoisonRecords", stats.poison as u64),
        ("ProjectorFailedRecords", stats.failed as u64),
    ]);
    info!(
        applied = stats.applied,
        stale = stats.stale,
        skipped = stats.skipped,
        poison = stats.poison,
        failed = stats.failed,
        "batch projected"
    );
    (response, stats)
}
