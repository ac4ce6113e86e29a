//! DynamoDB stream batch -> the watched views it changed (standings, and renames of
//! players they show), pushed to the events API with names on their rows; reports the
//! batch for retry only if the index, a card read or the events API failed.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_runtime::LambdaEvent;
use leaderboard::invoke::InvokeError;
use leaderboard::lambda_stream;
use leaderboard::service::Context;
use leaderboard::service::live;
use leaderboard::store::{Broadcaster, LiveViews, RankIndex, ScoreStore};

#[cfg(test)]
mod tests;

pub async fn handle<S: ScoreStore, I: RankIndex + LiveViews, B: Broadcaster>(
    ctx: &Context<S, I>,
    events: &B,
    event: LambdaEvent<Event>,
) -> Result<DynamoDbEventResponse, InvokeError> {
    let batch = lambda_stream::batch(event.payload);
    let (retry, _stats) = live::publish(ctx, events, batch).await;
    Ok(lambda_stream::response(retry))
}
