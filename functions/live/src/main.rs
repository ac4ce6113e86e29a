//! Lambda entry point of the live function over DynamoDB stream batches (pushes to watched
//! views): its clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        let ctx = wiring::app_context(config).await?;
        Ok::<_, lambda_runtime::Error>((ctx, wiring::broadcaster(config).await?))
    };
    wiring::serve(deps, |(ctx, events), event| {
        handler::handle(ctx, events, event)
    })
    .await
}
