//! Lambda entry point of the profiles function (display names, avatars, rewards): its
//! clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    use leaderboard::wiring::{self, config::Config};
    let deps = async |config: &Config| {
        Ok::<_, lambda_runtime::Error>(handler::Deps {
            ctx: wiring::app_context(config).await?,
            events: wiring::event_publisher(config).await?,
        })
    };
    // Boxed: the handler's future is deep enough to overflow the compiler's layout queries
    // once it is also instantiated over the in-memory ports (its tests).
    wiring::serve(deps, |deps, event| Box::pin(handler::handle(deps, event))).await
}
