//! Lambda entry point of the projector over DynamoDB stream batches (the index kept exact,
//! held results announced): its clients built once per container (`wiring::serve`),
//! then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        let index = wiring::rank_index(config).await?;
        let events = wiring::event_publisher(config).await?;
        Ok::<_, lambda_runtime::Error>((index, wiring::repair_reporter(config).await, events))
    };
    wiring::serve(deps, |(index, repairs, events), e| {
        Box::pin(handler::handle(index, repairs, events, e))
    })
    .await
}
