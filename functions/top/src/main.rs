//! Lambda entry point of the top function (top N, pages, around a rank): its clients built
//! once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;
use leaderboard::wiring::config::Config;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    wiring::serve(
        async |config: &Config| {
            let signer = config.require_cursor_secret()?;
            Ok::<_, lambda_runtime::Error>(handler::Deps {
                signer: leaderboard_rules::cursor::CursorSigner::new(signer),
                ctx: wiring::app_context(config).await?,
            })
        },
        handler::handle,
    )
    .await
}
