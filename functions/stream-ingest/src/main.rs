//! Lambda entry point: configuration, the DynamoDB and Redis adapters and the dead-letter
//! queue once per container, then the runtime loop over Kafka and Kinesis batches.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let deps = handler::Deps {
        ctx: wiring::app_context(&config).await?,
        dead_letters: wiring::dead_letters(&config).await?,
    };
    run(service_fn(|event| Box::pin(handler::handle(&deps, event)))).await
}
