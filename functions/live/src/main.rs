//! Lambda entry point: configuration, the Redis and DynamoDB clients (the rows' names)
//! and the events API publisher once per container, then the runtime loop over
//! DynamoDB stream batches.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let ctx = wiring::app_context(&config).await?;
    let events = wiring::broadcaster(&config).await?;
    run(service_fn(|event| handler::handle(&ctx, &events, event))).await
}
