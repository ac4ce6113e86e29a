//! The seal handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory::{MemoryEvents, MemoryStore};

use super::*;
use leaderboard::edge::http;

#[tokio::test]
async fn seals_on_schedule_and_names_a_board_that_cannot_be_sealed() {
    let deps = Deps {
        store: MemoryStore::default(),
        events: MemoryEvents::default(),
        settings: SealSettings::default(),
    };
    let scheduled = handle(&deps, testing::event(serde_json::json!({})))
        .await
        .unwrap();
    assert_eq!(scheduled["done"], true);
    assert_eq!(scheduled["boards"], serde_json::json!([]));
    let body = r#"{"leaderboard_id": "no:such:board"}"#;
    let req = http::request("POST /admin/seal", &[], &[], Some(body));
    let resp = handle(&deps, testing::event(serde_json::to_value(req).unwrap()))
        .await
        .unwrap();
    assert_eq!(resp["statusCode"], 404);
    let unknown = serde_json::json!({"board": "x"});
    let err = handle(&deps, testing::event(unknown)).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidPayload");
}
