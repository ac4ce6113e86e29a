//! The rank handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory;
use leaderboard_rules::board::Policy;

use super::*;

#[tokio::test]
async fn answers_the_rank_and_refuses_a_bad_k_and_a_player_without_a_score() {
    let ctx = memory::context();
    let scores = [("alice", 10), ("bob", 30), ("carol", 20)];
    memory::seed(&ctx, "h:rank", Policy::Best, &scores).await;
    let route = "GET /leaderboards/{lb}/players/{p}/rank";
    let call = |p: &'static str, k: &'static str| {
        let req = http::request(route, &[("lb", "h:rank"), ("p", p)], &[("k", k)], None);
        handle(&ctx, testing::event(req))
    };
    let ok = call("carol", "1").await.unwrap();
    assert_eq!(ok.status_code, 200);
    let body = http::response_json(&ok).unwrap();
    assert_eq!(
        (body["global_rank"].as_u64(), body["total"].as_u64()),
        (Some(2), Some(3))
    );
    assert_eq!(body["neighbors"].as_array().map(Vec::len), Some(3));
    assert_eq!(
        (body["percentile"].as_f64(), body["points_to_next"].as_i64()),
        (Some(66.67), Some(11))
    );
    let top = http::response_json(&call("bob", "0").await.unwrap()).unwrap();
    assert_eq!(
        (top["global_rank"].as_u64(), top["percentile"].as_f64()),
        (Some(1), Some(100.0))
    );
    assert!(top["points_to_next"].is_null());
    assert_eq!(top["neighbors"].as_array().map(Vec::len), Some(1));
    let bad_k = call("carol", "51").await.unwrap();
    assert_eq!(bad_k.status_code, 400);
    assert_eq!(
        http::response_json(&bad_k).unwrap()["error"]["code"],
        "invalid_request"
    );
    let missing = call("dave", "1").await.unwrap();
    assert_eq!(missing.status_code, 404);
    assert_eq!(
        http::response_json(&missing).unwrap()["error"]["code"],
        "not_ranked"
    );
}
