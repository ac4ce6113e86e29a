//! The DynamoDB stream surface (Lambda's stream events), as [`crate::edge::http`] is the API
//! Gateway one: a batch decoded into the projector's [`StreamBatch`], and the records to
//! retry turned into the batch response (`ReportBatchItemFailures`).

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::{DynamoDbBatchItemFailure, DynamoDbEventResponse};

use leaderboard_core::store::StreamBatch;

/// The standings of a stream event (see [`crate::adapters::dynamodb::decode`]).
pub fn batch(event: Event) -> StreamBatch {
    crate::adapters::dynamodb::decode(event.records)
}

/// The response that names `retry` (sequence numbers) as the batch's failed items.
pub fn response(retry: Vec<Option<String>>) -> DynamoDbEventResponse {
    let mut response = DynamoDbEventResponse::default();
    response.batch_item_failures = retry
        .into_iter()
        .map(|seq| {
            let mut failure = DynamoDbBatchItemFailure::default();
            failure.item_identifier = seq;
            failure
        })
        .collect();
    response
}
