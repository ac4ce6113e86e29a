//! Lambda entry point: configuration and clients once per container, then the runtime loop.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::service::Context;
use leaderboard::telemetry;

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let ctx = Context::from_config(&config).await?;
    run(service_fn(|event| handler::handle(&ctx, event))).await
}
