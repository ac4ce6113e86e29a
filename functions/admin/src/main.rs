//! Lambda entry point of the admin function (the operators' own routes: schema mappings,
//! the rank index view, dead letters, the audit trail): its clients built once per
//! container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        Ok::<_, lambda_runtime::Error>(handler::Deps {
            index: wiring::rank_index(config).await?,
            store: wiring::dynamo_store(config).await?,
            plane: wiring::cache_plane(config).await,
            dead_letters: wiring::dead_letters(config).await.ok(),
        })
    };
    // Boxed: the handler's future is deep enough to overflow the compiler's layout queries
    // once it is also instantiated over the in-memory ports (its tests).
    wiring::serve(deps, |deps, event| Box::pin(handler::handle(deps, event))).await
}
