//! DynamoDB stream batch -> the watched views it changed (standings, and renames of
//! players they show), pushed to the events API with names on their rows; reports the
//! batch for retry only if the index, a card read or the events API failed.

use aws_lambda_events::event::dynamodb::Event;
use aws_lambda_events::event::streams::DynamoDbEventResponse;
use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::InvokeError;
use leaderboard::edge::lambda_stream;
use leaderboard_core::service::Context;
use leaderboard_core::service::live;
use leaderboard_core::store::{Broadcaster, LiveViews, RankIndex, ScoreStore};

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
