//! The friends handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory;
use leaderboard_core::store::FriendsError;
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::PlayerId;

use super::*;

struct Fixed(Vec<&'static str>);

impl FriendsSource for Fixed {
    async fn friends_of(&self, _: &PlayerId) -> Result<Vec<PlayerId>, FriendsError> {
        Ok(self.0.iter().map(|p| PlayerId::parse(p).unwrap()).collect())
    }
}

#[tokio::test]
async fn places_the_player_among_friends_with_a_score() {
    let deps = Deps {
        ctx: memory::context(),
        friends: Fixed(vec!["bob", "zoe"]),
    };
    let scores = [("alice", 10), ("bob", 30), ("carol", 20)];
    memory::seed(&deps.ctx, "h:friends", Policy::Best, &scores).await;
    let route = "GET /leaderboards/{lb}/players/{p}/friends-rank";
    let req = http::request(route, &[("lb", "h:friends"), ("p", "alice")], &[], None);
    let resp = handle(&deps, testing::event(req)).await.unwrap();
    assert_eq!(resp.status_code, 200);
    let body = http::response_json(&resp).unwrap();
    assert_eq!(
        (
            body["friends_rank"].as_u64(),
            body["friends_total"].as_u64()
        ),
        (Some(2), Some(2))
    );
    assert_eq!(body["score"], 10);
    let rows: Vec<_> = body["neighbors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["player_id"].clone())
        .collect();
    assert_eq!(rows, ["bob", "alice"]);
    let req = http::request(route, &[("lb", "h:friends"), ("p", "../x")], &[], None);
    let bad = handle(&deps, testing::event(req)).await.unwrap();
    assert_eq!(bad.status_code, 400);
}
