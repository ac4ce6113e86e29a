//! `GET /leaderboards/{lb}/players/{p}/rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::http::{self, Request, Response};
use leaderboard::service::AppContext;
use leaderboard::service::reads;

pub async fn handle(ctx: &AppContext, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    let result = async {
        let r = reads::PlayerRead::admit(ctx, req).await?;
        reads::rank(ctx, &r.caller, &r.lb, &r.player, r.k).await
    };
    Ok(http::respond(200, result.await))
}
