//! `POST /leaderboards/{lb}/players/{p}/score` (one board) and `POST /scores` (one match
//! result to every window of its family).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::Context;
use leaderboard::service::ingest::{self, SubmitScore};
use leaderboard::service::moderation::Operator;
use leaderboard::service::scores::{self, MatchResult};
use leaderboard::store::{RankIndex, ScoreStore};

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    Ok(http::stamped(
        req,
        match http::route(req) {
            "POST /scores" => {
                let result = async {
                    Box::pin(scores::submit_match(
                        ctx,
                        MatchResult::new(http::json_body(req)?)?,
                    ))
                    .await
                };
                http::respond(200, result.await)
            }
            "POST /leaderboards/{lb}/players/{p}/score" => {
                let result = async {
                    let lb = http::path(req, "lb", LeaderboardId::parse)?;
                    let player = http::path(req, "p", PlayerId::parse)?;
                    let actor = Operator(http::operator(req));
                    let cmd = SubmitScore::new(lb, player, http::json_body(req)?, &actor)?;
                    Box::pin(ingest::submit_score(ctx, cmd)).await
                };
                http::respond(200, result.await)
            }
            _ => http::unknown_route(req),
        },
    ))
}

#[cfg(test)]
mod tests {
    use lambda_runtime::Context as Invocation;
    use leaderboard::board::Policy;
    use leaderboard::memory;

    use super::*;

    #[tokio::test]
    async fn records_a_score_replays_a_retry_and_refuses_bad_json() {
        let ctx = memory::context();
        memory::seed(&ctx, "h:ingest", Policy::Best, &[]).await;
        let route = "POST /leaderboards/{lb}/players/{p}/score";
        let call = |body: &'static str| {
            let path = [("lb", "h:ingest"), ("p", "alice")];
            let req = http::request(route, &path, &[], Some(body));
            handle(&ctx, LambdaEvent::new(req, Invocation::default()))
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
        let dots = handle(&ctx, LambdaEvent::new(req, Invocation::default()))
            .await
            .unwrap();
        assert_eq!(dots.status_code, 400, "a player no URL could read again");
        let req = http::request("POST /nowhere", &[], &[], None);
        let unknown = handle(&ctx, LambdaEvent::new(req, Invocation::default()))
            .await
            .unwrap();
        assert_eq!(unknown.status_code, 404);
    }
}
