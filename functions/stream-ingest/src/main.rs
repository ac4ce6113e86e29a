//! Lambda entry point of stream-ingest over Kafka and Kinesis batches (results from a
//! stream): its clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    wiring::serve(
        async |config: &leaderboard::wiring::config::Config| -> Result<_, lambda_runtime::Error> {
            let ctx = wiring::app_context(config).await?;
            let dead_letters = wiring::dead_letters(config).await?;
            Ok(handler::Deps { ctx, dead_letters })
        },
        |deps, event| Box::pin(handler::handle(deps, event)),
    )
    .await
}
