//! Lambda entry point: configuration, the Redis client and the events API publisher once
//! per container, then the runtime loop over DynamoDB stream batches.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let index = wiring::rank_index(&config).await?;
    let events = wiring::broadcaster(&config).await?;
    run(service_fn(|event| handler::handle(&index, &events, event))).await
}
