//! Lambda entry point: configuration and the Redis client once per container, then the
//! runtime loop over DynamoDB stream batches.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::redis::RedisRankIndex;
use leaderboard::telemetry;

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let index = RedisRankIndex::from_config(&config).await?;
    run(service_fn(|event| handler::handle(&index, event))).await
}
