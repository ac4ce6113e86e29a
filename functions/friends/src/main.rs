//! Lambda entry point of the friends function (ranks among a player's friends): its clients
//! built once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        Ok::<_, lambda_runtime::Error>(handler::Deps {
            friends: wiring::friends_source(config)?,
            ctx: wiring::app_context(config).await?,
        })
    };
    wiring::serve(deps, handler::handle).await
}
