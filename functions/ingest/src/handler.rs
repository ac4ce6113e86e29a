//! `POST /leaderboards/{lb}/players/{p}/score`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::AppContext;
use leaderboard::service::ingest::{self, SubmitScore};

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let lb = http::path(req, "lb", LeaderboardId::parse)?;
        let player = http::path(req, "p", PlayerId::parse)?;
        let cmd = SubmitScore::new(lb, player, http::json_body(req)?)?;
        ingest::submit_score(ctx, cmd).await
    };
    Ok(http::respond(200, result.await))
}
