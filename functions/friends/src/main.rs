//! Lambda entry point: configuration and clients once per container, then the runtime loop.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::social::HttpFriendsSource;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let deps = handler::Deps {
        friends: HttpFriendsSource::new(
            config.require_social_graph_url()?,
            config.social_graph_timeout,
        )?,
        ctx: wiring::app_context(&config).await?,
    };
    run(service_fn(|event| handler::handle(&deps, event))).await
}
