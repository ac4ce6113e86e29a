//! The Kafka and Kinesis surface of stream ingest (Lambda's `KafkaEvent` from Amazon MSK
//! or self-managed Kafka, and `KinesisEvent`), as [`crate::edge::lambda_stream`] is the
//! DynamoDB stream's: a batch decoded into [`StreamRecord`]s, and the records to retry
//! turned into the batch response (`ReportBatchItemFailures`).
//!
//! Where a record's source comes from: on Kafka, its topic (each pod publishes to its
//! own, `pod-{podId}-score-updates`). On Kinesis, where pods share a stream, a record
//! whose data is exactly `{"source": "...", "event": {...}}` names its source (the pod's
//! own event inside, in its own schema); any other record's source is the stream's
//! name. The partition key (the player id) orders one player's records either way.

use std::collections::BTreeMap;

use aws_lambda_events::event::kafka::KafkaEvent;
use aws_lambda_events::event::kinesis::KinesisEvent;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use leaderboard_core::service::stream_ingest::StreamRecord;

/// A decoded batch and where it came from (which shapes its response).
#[derive(Debug)]
pub struct RecordBatch {
    pub kind: Origin,
    pub records: Vec<StreamRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Kafka,
    Kinesis,
}

/// Decodes a Kafka or Kinesis event (told apart by shape: Kafka's `records` is an
/// object of `{topic}-{partition}` lists, Kinesis' `Records` a list).
pub fn decode(payload: Value) -> Result<RecordBatch, serde_json::Error> {
    if payload.get("records").is_some_and(Value::is_object) {
        let event: KafkaEvent = serde_json::from_value(payload)?;
        return Ok(RecordBatch {
            kind: Origin::Kafka,
            records: kafka(event),
        });
    }
    if payload.get("Records").is_some_and(Value::is_array) {
        let event: KinesisEvent = serde_json::from_value(payload)?;
        return Ok(RecordBatch {
            kind: Origin::Kinesis,
            records: kinesis(event),
        });
    }
    Err(serde::de::Error::custom(
        "not a Kafka or Kinesis event: no `records` object or `Records` list",
    ))
}

fn base64(text: Option<&str>) -> Vec<u8> {
    // Undecodable text is kept as it came (it then fails as `not_json`, dead-lettered).
    text.map(|t| STANDARD.decode(t).unwrap_or_else(|_| t.as_bytes().to_vec()))
        .unwrap_or_default()
}

fn kafka(event: KafkaEvent) -> Vec<StreamRecord> {
    // Partitions in a stable order, each in offset order.
    let partitions: BTreeMap<String, _> = event.records.into_iter().collect();
    let mut out = Vec::new();
    for (partition, mut records) in partitions {
        records.sort_by_key(|r| r.offset);
        for r in records {
            let topic = r.topic.clone().unwrap_or_else(|| {
                // `{topic}-{partition}` when the record does not say.
                partition
                    .rsplit_once('-')
                    .map_or(&*partition, |(t, _)| t)
                    .to_owned()
            });
            out.push(StreamRecord {
                partition: partition.clone(),
                position: r.offset.to_string(),
                source: topic,
                key: String::from_utf8_lossy(&base64(r.key.as_deref())).into_owned(),
                payload: base64(r.value.as_deref()),
            });
        }
    }
    out
}

fn kinesis(event: KinesisEvent) -> Vec<StreamRecord> {
    event
        .records
        .into_iter()
        .map(|r| {
            let stream = r
                .event_source_arn
                .as_deref()
                .and_then(|arn| arn.rsplit_once("stream/"))
                .map_or("", |(_, name)| name)
                .to_owned();
            let shard = r
                .event_id
                .as_deref()
                .and_then(|id| id.split_once(':'))
                .map_or("", |(shard, _)| shard)
                .to_owned();
            let data = r.kinesis.data.0;
            let (source, payload) = envelope(&data).unwrap_or((stream, data));
            StreamRecord {
                partition: shard,
                position: r.kinesis.sequence_number,
                source,
                key: r.kinesis.partition_key,
                payload,
            }
        })
        .collect()
}

/// `{"source": "...", "event": {...}}` and nothing else: the source and the event.
fn envelope(data: &[u8]) -> Option<(String, Vec<u8>)> {
    let Value::Object(mut fields) = serde_json::from_slice(data).ok()? else {
        return None;
    };
    if fields.len() != 2 {
        return None;
    }
    let Value::String(source) = fields.remove("source")? else {
        return None;
    };
    let event = fields.remove("event")?;
    Some((source, serde_json::to_vec(&event).ok()?))
}

/// The batch response naming, per partition, the first record to deliver again:
/// Kafka identifies it by `{partition, offset}`, Kinesis by its sequence number.
pub fn response(kind: Origin, retry: &BTreeMap<String, String>) -> Value {
    let failures: Vec<Value> = retry
        .iter()
        .map(|(partition, position)| match kind {
            Origin::Kafka => json!({"itemIdentifier": {
                "partition": partition,
                "offset": position.parse::<i64>().unwrap_or_default(),
            }}),
            Origin::Kinesis => json!({"itemIdentifier": position}),
        })
        .collect();
    json!({ "batchItemFailures": failures })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        STANDARD.encode(s)
    }

    #[test]
    fn kafka_records_keep_partition_order_and_name_their_topic() {
        let event = json!({
            "eventSource": "SelfManagedKafka",
            "bootstrapServers": "b1:9092",
            "records": {
                "pod-2-score-updates-0": [
                    {"topic": "pod-2-score-updates", "partition": 0, "offset": 8,
                     "timestamp": 1, "timestampType": "CREATE_TIME", "key": b64("bob"),
                     "value": b64("{\"b\":2}"), "headers": []},
                    {"topic": "pod-2-score-updates", "partition": 0, "offset": 7,
                     "timestamp": 1, "timestampType": "CREATE_TIME", "key": b64("ann"),
                     "value": b64("{\"a\":1}"), "headers": []}
                ],
                "pod-1-score-updates-3": [
                    {"partition": 3, "offset": 40, "timestamp": 1, "timestampType": "CREATE_TIME",
                     "key": null, "value": "not base64!", "headers": []}
                ]
            }
        });
        let batch = decode(event).unwrap();
        assert_eq!(batch.kind, Origin::Kafka);
        let got: Vec<_> = batch
            .records
            .iter()
            .map(|r| (&*r.partition, &*r.position, &*r.source, &*r.key))
            .collect();
        assert_eq!(
            got,
            [
                ("pod-1-score-updates-3", "40", "pod-1-score-updates", ""),
                ("pod-2-score-updates-0", "7", "pod-2-score-updates", "ann"),
                ("pod-2-score-updates-0", "8", "pod-2-score-updates", "bob"),
            ]
        );
        assert_eq!(batch.records[1].payload, b"{\"a\":1}");
        assert_eq!(batch.records[0].payload, b"not base64!");
        let retry = BTreeMap::from([("pod-2-score-updates-0".to_owned(), "8".to_owned())]);
        assert_eq!(
            response(batch.kind, &retry),
            json!({"batchItemFailures": [{"itemIdentifier":
                {"partition": "pod-2-score-updates-0", "offset": 8}}]})
        );
    }

    #[test]
    fn kinesis_records_take_the_envelope_source_or_the_stream_name() {
        let record = |seq: &str, data: &str| {
            json!({"eventSource": "aws:kinesis", "eventVersion": "1.0",
                "eventID": format!("shardId-000000000001:{seq}"), "eventName": "aws:kinesis:record",
                "awsRegion": "us-east-1",
                "eventSourceARN": "arn:aws:kinesis:us-east-1:1:stream/scores",
                "kinesis": {"kinesisSchemaVersion": "1.0", "partitionKey": "ann",
                    "sequenceNumber": seq, "data": b64(data),
                    "approximateArrivalTimestamp": 1.5, "encryptionType": "NONE"}})
        };
        let event = json!({"Records": [
            record("100", r#"{"source": "pod-3", "event": {"x": 1}}"#),
            record("101", r#"{"source": "pod-3", "event": {"x": 1}, "more": 1}"#),
        ]});
        let batch = decode(event).unwrap();
        assert_eq!(batch.kind, Origin::Kinesis);
        let r = &batch.records;
        assert_eq!(
            (&*r[0].source, &*r[0].payload),
            ("pod-3", &b"{\"x\":1}"[..])
        );
        assert_eq!(r[1].source, "scores");
        assert_eq!(
            (&*r[1].partition, &*r[1].position),
            ("shardId-000000000001", "101")
        );
        let retry = BTreeMap::from([(r[1].partition.clone(), "101".to_owned())]);
        assert_eq!(
            response(batch.kind, &retry),
            json!({"batchItemFailures": [{"itemIdentifier": "101"}]})
        );
        assert!(decode(json!({"foo": 1})).is_err());
    }
}
