//! Stream records decoded: the table's images of standings turned into index entries.
//!
//! Only standing items (`kind = "standing"`) in INSERT or MODIFY records project; boards
//! and receipts are skipped. A record whose image cannot be decoded is poison: retrying
//! cannot fix it, so it is counted and logged, never allowed to block the shard.
//! Standings are never deleted by the service; a REMOVE (an operator's manual delete)
//! is left to the rebuild to reconcile.

use aws_lambda_events::event::dynamodb::EventRecord;
use tracing::error;

use super::StandingItem;
use crate::store::{IndexEntry, StreamBatch};

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

/// Picks the standings out of stream records (skipping other items and logging poison).
pub fn decode(records: Vec<EventRecord>) -> StreamBatch {
    let mut out = StreamBatch::default();
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
            Change::Skip => out.skipped += 1,
            Change::Poison(reason) => {
                out.poison += 1;
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
