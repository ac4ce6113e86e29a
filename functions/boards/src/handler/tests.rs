//! The boards handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory::{MemoryIndex, MemoryStore};

use super::*;

#[tokio::test]
async fn creates_once_reads_and_refuses_a_transition_out_of_closed() {
    let deps = Deps {
        store: MemoryStore::default(),
        index: MemoryIndex::default(),
        signer: CursorSigner::new("test"),
        cache_ttl: std::time::Duration::ZERO,
    };
    let call = |route: &'static str, body: Option<&'static str>| {
        let req = http::request(route, &[("lb", "h:boards")], &[], body);
        handle(&deps, testing::event(req))
    };
    let create = Some(r#"{"leaderboard_id": "h:boards", "policy": "SUM"}"#);
    assert_eq!(
        call("POST /leaderboards", create)
            .await
            .unwrap()
            .status_code,
        201
    );
    assert_eq!(
        call("POST /leaderboards", create)
            .await
            .unwrap()
            .status_code,
        200
    );
    let other = Some(r#"{"leaderboard_id": "h:boards", "policy": "MIN"}"#);
    assert_eq!(
        call("POST /leaderboards", other).await.unwrap().status_code,
        409
    );
    let got = call("GET /leaderboards/{lb}", None).await.unwrap();
    assert_eq!(http::response_json(&got).unwrap()["policy"], "SUM");
    let close = Some(r#"{"status": "CLOSED"}"#);
    assert_eq!(
        call("PATCH /leaderboards/{lb}", close)
            .await
            .unwrap()
            .status_code,
        200
    );
    let reopen = call("PATCH /leaderboards/{lb}", Some(r#"{"status": "ACTIVE"}"#))
        .await
        .unwrap();
    assert_eq!(reopen.status_code, 409);
    let list = call("GET /leaderboards", None).await.unwrap();
    assert_eq!(
        http::response_json(&list).unwrap()["boards"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}
