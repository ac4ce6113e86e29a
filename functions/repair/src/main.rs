//! Lambda entry point: configuration and clients once per container, then the runtime
//! loop over batches of the repair queue and the rank index's notifications.

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
        stream: wiring::stream_source(&config).await,
        plane: wiring::cache_plane(&config).await,
    };
    run(service_fn(|event| handler::handle(&deps, event))).await
}
