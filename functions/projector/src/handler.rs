//! DynamoDB stream batch -> rank index, reporting only the records to retry; results
//! held for review (their queue items' inserts) -> `leaderboard.result.held` on the bus.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::InvokeError;
use leaderboard::edge::lambda_stream;
use leaderboard_core::service::projector;
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::store::{EventPublisher, HeldResult, RankIndex};
use tracing::error;

#[cfg(test)]
mod tests;

pub async fn handle<I: RankIndex, E: EventPublisher>(
    index: &I,
    repairs: &Reporter,
    events: &E,
    event: LambdaEvent<Event>,
) -> Result<DynamoDbEventResponse, InvokeError> {
    let mut batch = lambda_stream::batch(event.payload);
    let held = std::mem::take(&mut batch.held);
    let held_at = std::mem::take(&mut batch.held_sequence_numbers);
    let (mut retry, _stats) = projector::project(index, repairs, batch).await;
    retry.extend(publish_held(events, held, held_at).await);
    Ok(lambda_stream::response(retry))
}

/// Publishes each held result's event; the records whose event could not go out, to
/// retry (an event may then go out twice: at least once, as the bus promises).
async fn publish_held<E: EventPublisher>(
    events: &E,
    held: Vec<HeldResult>,
    sequence_numbers: Vec<Option<String>>,
) -> Vec<Option<String>> {
    let mut retry = Vec::new();
    for (h, seq) in held.iter().zip(sequence_numbers) {
        if let Err(e) = events.result_held(h).await {
            error!(error = %e, board = %h.leaderboard_id, "leaderboard.result.held not published; retrying its record");
            retry.push(seq);
        }
    }
    retry
}
