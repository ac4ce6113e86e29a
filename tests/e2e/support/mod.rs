//! Test helpers. Every test gets its own DynamoDB table and Redis key prefix, so tests
//! run in parallel against the servers `infra/test.sh` starts (their addresses come in
//! `LB_TEST_REDIS_URL`, `LB_TEST_REDIS_CLUSTER_URL` and `LB_TEST_DYNAMODB_URL`).
//!
//! By role: `backends` (the shared servers' addresses and clients), `env` ([`TestEnv`]:
//! a test's own table and prefix, its writes), `checks` (index against DynamoDB),
//! `stream` (stream records), `fixtures` (names, ids, generators, polling), and the
//! servers a test runs for itself to break: `redis_server`, `redis_cluster`,
//! `dynamo_server`, `crash_proxy` (calls to DynamoDB broken on purpose), `stack`,
//! `webhooks` (a receiver of the stack's webhooks); and
//! `document`, the API's document as the walks read it.

mod backends;
mod browser;
mod checks;
mod crash_proxy;
mod document;
mod dynamo_server;
mod env;
mod events;
mod fixtures;
mod live;
mod redis_cluster;
mod redis_server;
mod stack;
mod stream;
mod webhooks;

pub use backends::*;
pub use browser::*;
pub use crash_proxy::*;
pub use document::*;
pub use dynamo_server::*;
pub use env::*;
pub use events::*;
pub use fixtures::*;
pub use live::*;
pub use redis_cluster::*;
pub use redis_server::*;
pub use stack::*;
pub use stream::*;
pub use webhooks::*;

/// Declares a test module per scenario that runs it on both topologies: `single` against
/// the run's redis-server, `cluster` against its Redis Cluster. Each scenario is an
/// `async fn(redis_url: &str)` returning nothing or a `Result` (an error fails the test).
#[macro_export]
macro_rules! on_both_topologies {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test]
                async fn single() {
                    let url = $crate::support::redis_url();
                    $crate::support::Finished::finished(super::$scenario(&url).await);
                }

                #[tokio::test]
                async fn cluster() {
                    let url = $crate::support::cluster_url();
                    $crate::support::Finished::finished(super::$scenario(&url).await);
                }
            }
        )*
    };
}

/// What a scenario of [`on_both_topologies!`] comes to: nothing, or a result whose error
/// fails the test.
pub trait Finished {
    fn finished(self);
}

impl Finished for () {
    fn finished(self) {}
}

impl<E: std::fmt::Debug> Finished for Result<(), E> {
    fn finished(self) {
        self.expect("the scenario");
    }
}
