//! DynamoDB stream batch -> rank index, reporting only the records to retry.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_runtime::LambdaEvent;
use leaderboard::invoke::InvokeError;
use leaderboard::lambda_stream;
use leaderboard::service::projector;
use leaderboard::service::repair::Reporter;
use leaderboard::store::RankIndex;

#[cfg(test)]
mod tests;

pub async fn handle<I: RankIndex>(
    index: &I,
    repairs: &Reporter,
    event: LambdaEvent<Event>,
) -> Result<DynamoDbEventResponse, InvokeError> {
    let batch = lambda_stream::batch(event.payload);
    let (retry, _stats) = projector::project(index, repairs, batch).await;
    Ok(lambda_stream::response(retry))
}
