//! Lambda entry point of the boards function (boards, families, sealed results and history): its
//! clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;
use leaderboard_rules::cursor::CursorSigner;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        Ok::<_, lambda_runtime::Error>(handler::Deps {
            signer: CursorSigner::new(config.require_cursor_secret()?),
            index: wiring::rank_index(config).await?,
            store: wiring::dynamo_store(config).await?,
            cache_ttl: wiring::settings(config).board_cache_ttl,
        })
    };
    // Boxed: the handler's future is deep enough to overflow the compiler's layout queries
    // once it is also instantiated over the in-memory ports (its tests).
    wiring::serve(deps, |deps, event| Box::pin(handler::handle(deps, event))).await
}
