//! `GET /leaderboards/{lb}/players/{p}/friends-rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::Context;
use leaderboard::service::reads;
use leaderboard::store::{FriendsSource, RankIndex, RateCounter, ScoreStore};

pub struct Deps<S, I, F> {
    pub ctx: Context<S, I>,
    pub friends: F,
}

pub async fn handle<S: ScoreStore, I: RankIndex + RateCounter, F: FriendsSource>(
    deps: &Deps<S, I, F>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let lb = http::path(req, "lb", LeaderboardId::parse)?;
        let player = http::path(req, "p", PlayerId::parse)?;
        let k = reads::parse_k(http::query(req, "k"))?;
        let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
        let caller = http::caller(req);
        reads::admit(&deps.ctx, &caller).await?;
        reads::friends_rank(&deps.ctx, &deps.friends, &caller, &lb, &player, k, mode).await
    };
    Ok(http::stamped(req, http::respond(200, result.await)))
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::ids::PlayerId;
    use leaderboard::memory;
    use leaderboard::store::FriendsError;

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
        let resp = handle(&deps, LambdaEvent::new(req, Invocation::default()))
            .await
            .unwrap();
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
        let bad = handle(&deps, LambdaEvent::new(req, Invocation::default()))
            .await
            .unwrap();
        assert_eq!(bad.status_code, 400);
    }
}
