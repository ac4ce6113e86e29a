//! `POST /leaderboards/{lb}/players/{p}/score` (one board) and `POST /scores` (one match
//! result to every window of its family).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::{body, reply};
use leaderboard_core::service::Context;
use leaderboard_core::service::ingest;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::scores::{self, MatchResult};
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::store::{RankIndex, ScoreStore};

#[cfg(test)]
mod tests;

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    reply::routed(&event, async |req, route| match route {
        // A result held for review (on any of its boards) answers 202 (docs/integrity.md).
        "POST /scores" => {
            let done = async {
                let m = MatchResult::new(body::json_body(req)?)?;
                Box::pin(scores::submit_match(ctx, m)).await
            };
            match done.await {
                Ok(reply) => reply::json(if reply.held() { 202 } else { 200 }, &reply),
                Err(e) => reply::respond::<()>(200, Err(e)),
            }
        }
        "POST /leaderboards/{lb}/players/{p}/score" => {
            let done = async {
                let (lb, player) = http::board_player(req)?;
                let actor = Operator(http::operator(req));
                let cmd = SubmitScore::new(lb, player, body::json_body(req)?, &actor)?;
                Box::pin(ingest::submit_score(ctx, cmd)).await
            };
            match done.await {
                Ok(reply) => reply::json(if reply.held.is_some() { 202 } else { 200 }, &reply),
                Err(e) => reply::respond::<()>(200, Err(e)),
            }
        }
        _ => reply::unknown_route(req),
    })
    .await
}
