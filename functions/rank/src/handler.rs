//! `GET /leaderboards/{lb}/players/{p}/rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::reads;
use leaderboard::wiring::AppContext;

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let lb = http::path(req, "lb", LeaderboardId::parse)?;
        let player = http::path(req, "p", PlayerId::parse)?;
        let k = reads::parse_k(http::query(req, "k"))?;
        let caller = http::caller(req);
        reads::admit(ctx, &caller).await?;
        reads::rank(ctx, &caller, &lb, &player, k).await
    };
    Ok(http::respond(200, result.await))
}
