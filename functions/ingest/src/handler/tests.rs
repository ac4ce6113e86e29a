//! The ingest handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory;
use leaderboard_rules::board::Policy;

use super::*;

#[tokio::test]
async fn records_a_score_replays_a_retry_and_refuses_bad_json() {
    let ctx = memory::context();
    memory::seed(&ctx, "h:ingest", Policy::Best, &[]).await;
    let route = "POST /leaderboards/{lb}/players/{p}/score";
    let call = |body: &'static str| {
        let path = [("lb", "h:ingest"), ("p", "alice")];
        let req = http::request(route, &path, &[], Some(body));
        handle(&ctx, testing::event(req))
    };
    let body = r#"{"new_score": 120, "match_id": "m-1"}"#;
    let first = http::response_json(&call(body).await.unwrap()).unwrap();
    assert_eq!(
        (first["score"].as_i64(), first["rank"].as_u64()),
        (Some(120), Some(1))
    );
    assert_eq!(first["replayed"], false);
    assert!(first["previous_rank"].is_null(), "new to the board");
    let again = http::response_json(&call(body).await.unwrap()).unwrap();
    assert_eq!(again["replayed"], true);
    let better = r#"{"new_score": 150, "match_id": "m-2"}"#;
    let second = http::response_json(&call(better).await.unwrap()).unwrap();
    assert_eq!(
        (second["previous_rank"].as_u64(), second["rank"].as_u64()),
        (Some(1), Some(1))
    );
    let bad = call("{not json").await.unwrap();
    assert_eq!(bad.status_code, 400);
    assert_eq!(
        http::response_json(&bad).unwrap()["error"]["code"],
        "malformed_json"
    );
    let path = [("lb", "h:ingest"), ("p", "..")];
    let req = http::request(route, &path, &[], Some(body));
    let dots = handle(&ctx, testing::event(req)).await.unwrap();
    assert_eq!(dots.status_code, 400, "a player no URL could read again");
    let req = http::request("POST /nowhere", &[], &[], None);
    let unknown = handle(&ctx, testing::event(req)).await.unwrap();
    assert_eq!(unknown.status_code, 404);
}
