//! Lambda entry point of the seal function (closed windows sealed, leagues settled, on a
//! schedule; boards exported): its clients built once per container (`wiring::serve`), then the runtime
//! loop.

mod handler;

use leaderboard::wiring;

#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let deps = async |config: &leaderboard::wiring::config::Config| {
        let store = wiring::dynamo_store(config).await?;
        let events = wiring::event_publisher(config).await?;
        let settings = wiring::seal::seal_settings(config);
        let exports = wiring::export::exports(config).await?;
        Ok::<_, lambda_runtime::Error>(handler::Deps {
            store,
            events,
            settings,
            jobs: handler::Jobs {
                files: exports.files,
                queue: exports.queue,
                exports: exports.settings,
                resets: wiring::seal::reset_settings(config),
            },
        })
    };
    wiring::serve(deps, |deps, event| Box::pin(handler::handle(deps, event))).await
}
