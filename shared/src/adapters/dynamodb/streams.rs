//! `DynamoStreams`: the table's stream read again, for the repair of a batch the
//! projector gave up on (its on-failure record names the shard and the sequence range).
//!
//! Records are decoded exactly as the projector's batches are (see [`decode`]), so the
//! repair applies them as the projector would have. A range that can no longer be read
//! (the stream keeps records 24 hours; a shard can be gone) is reported as `None`: the
//! caller then rebuilds instead.

use std::cmp::Ordering;

use aws_lambda_events::event::dynamodb::EventRecord;
use aws_sdk_dynamodbstreams::Client;
use aws_sdk_dynamodbstreams::error::SdkError;
use aws_sdk_dynamodbstreams::operation::get_shard_iterator::GetShardIteratorError;
use aws_sdk_dynamodbstreams::types::{Record, ShardIteratorType};
use tracing::instrument;

use super::changes::decode;
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{StreamBatch, StreamRange, StreamSource};

/// Pages of records read at most for one range (a failed batch holds at most 10,000).
const MAX_PAGES: usize = 200;
/// Empty pages in a row after which the read gives up (and is tried again later).
const MAX_EMPTY_PAGES: usize = 5;

/// The DynamoDB Streams adapter of [`StreamSource`].
#[derive(Clone)]
pub struct DynamoStreams {
    client: Client,
}

impl DynamoStreams {
    pub fn new(client: Client) -> Self {
        Self { client }
    }
}

/// Orders sequence numbers (decimal strings of varying length, no leading zeros).
pub fn cmp_sequence(a: &str, b: &str) -> Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// A record from the DynamoDB Streams API in the shape Lambda delivers it.
pub fn lambda_record(r: &Record) -> EventRecord {
    let mut rec = EventRecord::default();
    rec.event_id = r.event_id().unwrap_or_default().to_owned();
    rec.event_name = r
        .event_name()
        .map(|n| n.as_str().to_owned())
        .unwrap_or_default();
    rec.event_source = Some("aws:dynamodb".into());
    if let Some(sr) = r.dynamodb() {
        rec.change.sequence_number = sr.sequence_number().map(str::to_owned);
        rec.change.keys = sr
            .keys()
            .cloned()
            .map(serde_dynamo::Item::from)
            .unwrap_or_default();
        rec.change.new_image = sr
            .new_image()
            .cloned()
            .map(serde_dynamo::Item::from)
            .unwrap_or_default();
        rec.change.old_image = sr
            .old_image()
            .cloned()
            .map(serde_dynamo::Item::from)
            .unwrap_or_default();
    }
    rec
}

fn sequence_of(r: &Record) -> &str {
    r.dynamodb()
        .and_then(|d| d.sequence_number())
        .unwrap_or_default()
}

impl DynamoStreams {
    /// The shard iterator at the range's first record, as the stream returns it (itself
    /// absent at a closed shard's end); `None` when the stream no longer has the range
    /// (trimmed after 24 hours, or the shard is gone).
    async fn iterator_at(&self, range: &StreamRange) -> Result<Option<Option<String>>, StoreError> {
        let first = self
            .client
            .get_shard_iterator()
            .stream_arn(&range.stream_arn)
            .shard_id(&range.shard_id)
            .shard_iterator_type(ShardIteratorType::AtSequenceNumber)
            .sequence_number(&range.start)
            .send()
            .await;
        match first {
            Ok(out) => Ok(Some(out.shard_iterator)),
            Err(SdkError::ServiceError(e))
                if matches!(
                    e.err(),
                    GetShardIteratorError::TrimmedDataAccessException(_)
                        | GetShardIteratorError::ResourceNotFoundException(_)
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(StoreError::call("GetShardIterator", e)),
        }
    }
}

impl StreamSource for DynamoStreams {
    #[instrument(skip(self), fields(shard = %range.shard_id, start = %range.start, end = %range.end))]
    async fn read_range(&self, range: &StreamRange) -> Result<Option<StreamBatch>, StoreError> {
        let Some(mut iterator) = self.iterator_at(range).await? else {
            return Ok(None);
        };
        let mut records = Vec::new();
        let mut empty = 0;
        for _ in 0..MAX_PAGES {
            let Some(it) = iterator.take() else {
                // A closed shard's end: everything up to it was read.
                return Ok(Some(decode(records)));
            };
            let page = self
                .client
                .get_records()
                .shard_iterator(it)
                .limit(1_000)
                .send()
                .await
                .map_err(|e| StoreError::call("GetRecords", e))?;
            empty = if page.records().is_empty() {
                empty + 1
            } else {
                0
            };
            for r in page.records() {
                if cmp_sequence(sequence_of(r), &range.end) == Ordering::Greater {
                    return Ok(Some(decode(records)));
                }
                records.push(lambda_record(r));
            }
            let reached = records
                .last()
                .and_then(|r| r.change.sequence_number.as_deref())
                .is_some_and(|s| cmp_sequence(s, &range.end) != Ordering::Less);
            if reached {
                return Ok(Some(decode(records)));
            }
            if empty >= MAX_EMPTY_PAGES {
                break;
            }
            iterator = page.next_shard_iterator;
        }
        // The range was delivered once, so its records exist; not reaching its end now is
        // a passing condition, never a reason to skip them.
        Err(StoreError::StreamIncomplete {
            shard: range.shard_id.clone(),
            end: range.end.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_order_by_value_not_by_text() {
        assert_eq!(cmp_sequence("99", "100"), Ordering::Less);
        assert_eq!(
            cmp_sequence("1100000000017454423802", "1100000000017454423802"),
            Ordering::Equal
        );
        assert_eq!(
            cmp_sequence("1100000000017454423810", "1100000000017454423802"),
            Ordering::Greater
        );
    }
}
