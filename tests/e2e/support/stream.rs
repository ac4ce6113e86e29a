//! The table's stream, read back as Lambda delivers it.

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use leaderboard::adapters::dynamodb::lambda_record;
use leaderboard::edge::lambda_stream;
use leaderboard_core::store::StreamBatch;

use super::{TestEnv, streams_client};

/// The batch the projector gets for a Lambda DynamoDB event holding `records`.
pub fn batch(records: Vec<EventRecord>) -> StreamBatch {
    lambda_stream::batch(event(records))
}

/// A Lambda DynamoDB event holding `records`.
pub fn event(records: Vec<EventRecord>) -> Event {
    let mut e = Event::default();
    e.records = records;
    e
}

impl TestEnv {
    /// The whole stream of the table, oldest first, as Lambda would deliver it.
    pub async fn stream_records(&self) -> Vec<EventRecord> {
        let table = self
            .ctx
            .store
            .client()
            .describe_table()
            .table_name(self.ctx.store.table())
            .send()
            .await
            .expect("describe table");
        let arn = table
            .table()
            .and_then(|t| t.latest_stream_arn())
            .expect("stream arn");
        let streams = streams_client().await;
        let desc = streams
            .describe_stream()
            .stream_arn(arn)
            .send()
            .await
            .expect("describe stream");
        let mut records = Vec::new();
        for shard in desc
            .stream_description()
            .map(|d| d.shards())
            .unwrap_or_default()
        {
            let mut iterator = streams
                .get_shard_iterator()
                .stream_arn(arn)
                .shard_id(shard.shard_id().unwrap_or_default())
                .shard_iterator_type(aws_sdk_dynamodbstreams::types::ShardIteratorType::TrimHorizon)
                .send()
                .await
                .expect("shard iterator")
                .shard_iterator;
            while let Some(it) = iterator {
                let page = streams
                    .get_records()
                    .shard_iterator(it)
                    .send()
                    .await
                    .expect("get records");
                if page.records().is_empty() {
                    break;
                }
                records.extend(page.records().iter().map(lambda_record));
                iterator = page.next_shard_iterator;
            }
        }
        records
    }
}
