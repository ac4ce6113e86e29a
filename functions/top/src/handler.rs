//! `GET /leaderboards/{lb}/top?n=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::AppContext;
use leaderboard::service::reads;

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let lb = http::path(req, "lb", LeaderboardId::parse)?;
        let n = reads::parse_n(http::query(req, "n"))?;
        reads::top(ctx, &lb, n).await
    };
    Ok(http::respond(200, result.await))
}
