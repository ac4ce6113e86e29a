//! `POST /leaderboards/{lb}/players/{p}/score` (one board) and `POST /scores` (one match
//! result to every window of its family).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::service::Context;
use leaderboard::service::ingest::{self, SubmitScore};
use leaderboard::service::moderation::Operator;
use leaderboard::service::scores::{self, MatchResult};
use leaderboard::store::{RankIndex, ScoreStore};

#[cfg(test)]
mod tests;

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    http::routed(&event, async |req, route| match route {
        "POST /scores" => {
            http::reply(200, async {
                Box::pin(scores::submit_match(
                    ctx,
                    MatchResult::new(http::json_body(req)?)?,
                ))
                .await
            })
            .await
        }
        "POST /leaderboards/{lb}/players/{p}/score" => {
            http::reply(200, async {
                let (lb, player) = http::board_player(req)?;
                let actor = Operator(http::operator(req));
                let cmd = SubmitScore::new(lb, player, http::json_body(req)?, &actor)?;
                Box::pin(ingest::submit_score(ctx, cmd)).await
            })
            .await
        }
        _ => http::unknown_route(req),
    })
    .await
}
