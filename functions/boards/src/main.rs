//! Lambda entry point: configuration and clients once per container, then the runtime loop.

mod handler;

use lambda_runtime::{Error, run, service_fn};
use leaderboard::config::Config;
use leaderboard::cursor::CursorSigner;
use leaderboard::{telemetry, wiring};

#[tokio::main]
async fn main() -> Result<(), Error> {
    telemetry::init();
    let config = Config::from_env()?;
    let deps = handler::Deps {
        signer: CursorSigner::new(config.require_cursor_secret()?),
        index: wiring::rank_index(&config).await?,
        store: wiring::dynamo_store(&config).await?,
        plane: wiring::cache_plane(&config).await,
        dead_letters: wiring::dead_letters(&config).await.ok(),
    };
    // Boxed: the handler's future is deep enough to overflow the compiler's layout queries
    // once it is also instantiated over the in-memory ports (its tests).
    run(service_fn(|event| Box::pin(handler::handle(&deps, event)))).await
}
