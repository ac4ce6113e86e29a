//! `GET /leaderboards/{lb}/top?n=` and `GET /leaderboards/{lb}/ranks?limit=&cursor=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::cursor::CursorSigner;
use leaderboard::http::{self, Request, Response};
use leaderboard::ids::LeaderboardId;
use leaderboard::service::reads;
use leaderboard::wiring::AppContext;

pub struct Deps {
    pub ctx: AppContext,
    pub signer: CursorSigner,
}

pub async fn handle(deps: &Deps, event: LambdaEvent<Request>) -> Result<Response, Error> {
    let req = &event.payload;
    Ok(match http::route(req) {
        "GET /leaderboards/{lb}/top" => {
            let result = async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let n = reads::parse_n(http::query(req, "n"))?;
                reads::admit(&deps.ctx, &http::caller(req)).await?;
                reads::top(&deps.ctx, &lb, n).await
            };
            http::respond(200, result.await)
        }
        "GET /leaderboards/{lb}/ranks" => {
            let result = async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let limit = reads::parse_limit(http::query(req, "limit"))?;
                let cursor = http::query(req, "cursor");
                reads::admit(&deps.ctx, &http::caller(req)).await?;
                reads::ranks(&deps.ctx, &deps.signer, &lb, cursor, limit).await
            };
            http::respond(200, result.await)
        }
        _ => http::unknown_route(req),
    })
}
