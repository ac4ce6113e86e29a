//! Lambda entry point of the ingest function (a player's result on one board): its clients
//! built once per container (`wiring::serve`), then the runtime loop.

mod handler;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    leaderboard::wiring::serve(leaderboard::wiring::app_context, handler::handle).await
}
