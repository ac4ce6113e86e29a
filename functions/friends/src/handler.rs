//! `GET /leaderboards/{lb}/players/{p}/friends-rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::service::AppContext;
use leaderboard::service::reads;
use leaderboard::social::HttpFriendsSource;

pub struct Deps {
    pub ctx: AppContext,
    pub friends: HttpFriendsSource,
}

pub async fn handle(deps: &Deps, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let r = reads::PlayerRead::admit(&deps.ctx, req).await?;
        reads::friends_rank(&deps.ctx, &deps.friends, &r.caller, &r.lb, &r.player, r.k).await
    };
    Ok(http::respond(200, result.await))
}
