//! `POST /leaderboards/{lb}/players/{p}/score` (one board) and `POST /scores` (one match
//! result to every window of its family).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::ingest::{self, SubmitScore};
use leaderboard::service::scores::{self, MatchResult};
use leaderboard::wiring::AppContext;

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    Ok(match http::route(req) {
        "POST /scores" => {
            let result =
                async { scores::submit_match(ctx, MatchResult::new(http::json_body(req)?)?).await };
            http::respond(200, result.await)
        }
        "POST /leaderboards/{lb}/players/{p}/score" => {
            let result = async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let player = http::path(req, "p", PlayerId::parse)?;
                let cmd = SubmitScore::new(lb, player, http::json_body(req)?)?;
                ingest::submit_score(ctx, cmd).await
            };
            http::respond(200, result.await)
        }
        _ => http::unknown_route(req),
    })
}
