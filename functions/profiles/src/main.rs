//! Lambda entry point of the profiles function (display names, avatars, erasure): its
//! clients built once per container (`wiring::serve`), then the runtime loop.

mod handler;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    use leaderboard::wiring::{app_context, serve};
    // Boxed: the handler's future is deep enough to overflow the compiler's layout queries
    // once it is also instantiated over the in-memory ports (its tests).
    serve(app_context, |ctx, event| {
        Box::pin(handler::handle(ctx, event))
    })
    .await
}
