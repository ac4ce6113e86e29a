//! How the handler tests call their function as the runtime would (feature `test-util`):
//! [`event`] wraps a payload as Lambda delivers it, [`reply`] sends an API Gateway request
//! through a handler and reads its status and JSON body, and [`handler_call!`](crate::handler_call)
//! declares a test module's `call`.

/// An event as the runtime delivers it: `payload` with a minute before its deadline.
pub fn event<T>(payload: T) -> lambda_runtime::LambdaEvent<T> {
    let mut invocation = lambda_runtime::Context::default();
    invocation.deadline = (leaderboard_rules::time::now_ms() + 60_000) as u64;
    lambda_runtime::LambdaEvent::new(payload, invocation)
}

/// A reply's status and JSON body (null when none).
pub type Reply = (u16, serde_json::Value);

/// What an HTTP handler answers `req`, called as the runtime calls it ([`event`]): the
/// status and the JSON body (null when none). The handler tests' one way to call their
/// function; [`handler_call!`](crate::handler_call) declares it as a test's `call`.
pub async fn reply<F, Fut, E>(handle: F, req: crate::edge::http::Request) -> Reply
where
    F: FnOnce(lambda_runtime::LambdaEvent<crate::edge::http::Request>) -> Fut,
    Fut: std::future::Future<Output = Result<crate::edge::http::Response, E>>,
    E: std::fmt::Debug,
{
    let resp = handle(event(req))
        .await
        .expect("a handler answers every request");
    let json = crate::edge::http::response_json(&resp).unwrap_or_default();
    (resp.status_code as u16, json)
}

/// Declares a handler test module's `call(deps, route, params, body)` (with `query` as
/// second argument: `call(deps, route, params, query, body)`), which sends the request to
/// the module's `handle(deps, event)` through [`reply`]. `deps` is a `leaderboard_core::memory::context` unless
/// the module names its own type (the crate calling it depends on `leaderboard-core`).
#[macro_export]
macro_rules! handler_call {
    () => {
        $crate::handler_call!(
            ::leaderboard_core::service::Context<::leaderboard_core::memory::MemoryStore, ::leaderboard_core::memory::MemoryIndex>
        );
    };
    ($deps:ty) => {
        async fn call(
            deps: &$deps,
            route: &str,
            params: &[(&str, &str)],
            body: Option<&str>,
        ) -> $crate::edge::testing::Reply {
            let req = $crate::edge::http::request(route, params, &[], body);
            $crate::edge::testing::reply(|e| handle(deps, e), req).await
        }
    };
    ($deps:ty, query) => {
        async fn call(
            deps: &$deps,
            route: &str,
            params: &[(&str, &str)],
            query: &[(&str, &str)],
            body: Option<&str>,
        ) -> $crate::edge::testing::Reply {
            let req = $crate::edge::http::request(route, params, query, body);
            $crate::edge::testing::reply(|e| handle(deps, e), req).await
        }
    };
}
