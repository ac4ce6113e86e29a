//! Lambda entry point: configuration and clients once per container, then the runtime loop.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let ctx = wiring::app_context(&config).await?;
    run(service_fn(|event| Box::pin(handler::handle(&ctx, event)))).await
}
