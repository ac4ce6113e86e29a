//! Lambda entry point of the rank function (a player's rank and neighbours, live or not):
//! its clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    leaderboard::wiring::serve(leaderboard::wiring::app_context, handler::handle).await
}
