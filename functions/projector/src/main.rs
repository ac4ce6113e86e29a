//! Lambda entry point of the projector over DynamoDB stream batches (the index kept exact):
//! its clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::config::Config| {
        let index = wiring::rank_index(config).await?;
        Ok::<_, lambda_runtime::Error>((index, wiring::repair_reporter(config).await))
    };
    wiring::serve(deps, |(index, repairs), e| {
        handler::handle(index, repairs, e)
    })
    .await
}
