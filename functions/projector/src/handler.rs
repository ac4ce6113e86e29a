//! DynamoDB stream batch -> rank index, reporting only the records to retry.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_runtime::{Error, LambdaEvent};
use leaderboard::redis::RedisRankIndex;
use leaderboard::service::projector;

pub async fn handle(
    index: &RedisRankIndex,
    event: LambdaEvent<Event>,
) -> Result<DynamoDbEventResponse, Error> {
    let (response, _stats) = projector::project(index, event.payload).await;
    Ok(response)
}
