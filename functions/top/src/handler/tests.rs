//! The top handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory;
use leaderboard_rules::board::Policy;

use super::*;

#[tokio::test]
async fn serves_the_top_and_pages_and_refuses_a_bad_limit() {
    let deps = Deps {
        ctx: memory::context(),
        signer: CursorSigner::new("test"),
    };
    let scores = [("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5)];
    memory::seed(&deps.ctx, "h:top", Policy::Best, &scores).await;
    let call = |route: &'static str, query: Vec<(&'static str, String)>| {
        let query: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let req = http::request(route, &[("lb", "h:top")], &query, None);
        handle(&deps, testing::event(req))
    };
    let top = call("GET /leaderboards/{lb}/top", vec![("n", "2".into())])
        .await
        .unwrap();
    let body = http::response_json(&top).unwrap();
    assert_eq!(top.status_code, 200);
    assert_eq!(body["top_n"], 2);
    let players: Vec<_> = body["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["player_id"].clone())
        .collect();
    assert_eq!(players, ["e", "d"]);
    let route = "GET /leaderboards/{lb}/ranks";
    let first = call(route, vec![("limit", "3".into())]).await.unwrap();
    let cursor = http::response_json(&first).unwrap()["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = call(route, vec![("limit", "3".into()), ("cursor", cursor)])
        .await
        .unwrap();
    let body = http::response_json(&second).unwrap();
    assert_eq!(body["entries"][0]["rank"], 4);
    assert!(body["next_cursor"].is_null());
    let bad = call(route, vec![("limit", "0".into())]).await.unwrap();
    assert_eq!(bad.status_code, 400);
    let tampered = call(route, vec![("cursor", "x".into())]).await.unwrap();
    assert_eq!(
        http::response_json(&tampered).unwrap()["error"]["code"],
        "invalid_cursor"
    );
}

#[tokio::test]
async fn each_reader_sees_self_on_their_own_row_of_a_shared_cached_reply() {
    let deps = Deps {
        ctx: memory::context(),
        signer: CursorSigner::new("test"),
    };
    let scores = [("a", 1), ("b", 2), ("c", 3)];
    memory::seed(&deps.ctx, "h:self", Policy::Best, &scores).await;
    // The flagged players by reader and route; the second reader of each route is
    // served from the reply cache the first one filled.
    let flagged = async |route: &'static str, query: &[(&str, &str)], reader: Option<&str>| {
        let req = http::request(route, &[("lb", "h:self")], query, None);
        let req = match reader {
            Some(p) => http::signed_in(req, p),
            None => req,
        };
        let reply = handle(&deps, testing::event(req)).await.unwrap();
        assert_eq!(reply.status_code, 200);
        let body = http::response_json(&reply).unwrap();
        let rows = body["entries"].as_array().unwrap().clone();
        rows.iter()
            .filter(|e| e["self"] == true)
            .map(|e| e["player_id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    for (route, query) in [
        ("GET /leaderboards/{lb}/top", vec![("n", "3")]),
        ("GET /leaderboards/{lb}/ranks", vec![("limit", "3")]),
        ("GET /leaderboards/{lb}/entries", vec![("players", "a,b,c")]),
    ] {
        assert_eq!(flagged(route, &query, Some("b")).await, ["b"], "{route}");
        assert_eq!(flagged(route, &query, Some("c")).await, ["c"], "{route}");
        assert!(
            flagged(route, &query, Some("zed")).await.is_empty(),
            "{route}"
        );
        assert!(flagged(route, &query, None).await.is_empty(), "{route}");
    }
}
