//! Lambda entry point of the repair function over the repair queue and the index's
//! notifications: its clients built once per container (`wiring::serve`), then the runtime
//! loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    wiring::serve(
        async |config: &leaderboard::wiring::config::Config| {
            Ok::<_, lambda_runtime::Error>(handler::Deps {
                ctx: wiring::app_context(config).await?,
                stream: wiring::stream_source(config).await,
                plane: wiring::cache_plane(config).await,
            })
        },
        handler::handle,
    )
    .await
}
