//! The rebuild handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory;
use leaderboard_core::store::Health;
use leaderboard_core::store::IndexUpkeep;
use leaderboard_rules::board::Policy;

use super::*;
use leaderboard::edge::http;

#[tokio::test]
async fn rebuilds_directly_and_over_http_and_names_a_bad_request() {
    let ctx = memory::context();
    let lb = memory::seed(&ctx, "h:rebuild", Policy::Best, &[("a", 1), ("b", 2)]).await;
    ctx.index.wipe(&lb);
    let direct = serde_json::json!({"leaderboard_id": "h:rebuild"});
    let report = handle(&ctx, testing::event(direct)).await.unwrap();
    assert_eq!(report["done"], true);
    assert_eq!(report["boards"][0]["loaded"], 2);
    assert_eq!(
        ctx.index.health(std::slice::from_ref(&lb)).await.unwrap(),
        [Health::Ready]
    );
    let body = r#"{"all": true}"#;
    let req = http::request("POST /admin/rebuild", &[], &[], Some(body));
    let over_http = serde_json::to_value(req).unwrap();
    let resp = handle(&ctx, testing::event(over_http)).await.unwrap();
    assert_eq!(resp["statusCode"], 200);
    let neither = serde_json::json!({});
    let err = handle(&ctx, testing::event(neither)).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidRequest");
    let not_an_object = serde_json::json!("rebuild");
    let err = handle(&ctx, testing::event(not_an_object))
        .await
        .unwrap_err();
    assert_eq!(err.error_type(), "InvalidPayload");
}
