//! `GET /leaderboards/{lb}/players/{p}/friends-rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::{LeaderboardId, PlayerId};
use leaderboard::service::reads;
use leaderboard::social::HttpFriendsSource;
use leaderboard::wiring::AppContext;

pub struct Deps {
    pub ctx: AppContext,
    pub friends: HttpFriendsSource,
}

pub async fn handle(deps: &Deps, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let lb = http::path(req, "lb", LeaderboardId::parse)?;
        let player = http::path(req, "p", PlayerId::parse)?;
        let k = reads::parse_k(http::query(req, "k"))?;
        let caller = http::caller(req);
        reads::admit(&deps.ctx, &caller).await?;
        reads::friends_rank(&deps.ctx, &deps.friends, &caller, &lb, &player, k).await
    };
    Ok(http::respond(200, result.await))
}
