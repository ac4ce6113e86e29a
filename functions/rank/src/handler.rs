//! `GET /leaderboards/{lb}/players/{p}/rank?k=&rank_mode=` and the player's live
//! neighbourhood, `GET /leaderboards/{lb}/players/{p}/live?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::reply;
use leaderboard_core::service::Context;
use leaderboard_core::service::{live, reads};
use leaderboard_core::store::{LiveViews, RankIndex, RateCounter, ScoreStore};

#[cfg(test)]
mod tests;

pub async fn handle<S: ScoreStore, I: RankIndex + RateCounter + LiveViews>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    reply::routed(&event, async |req, route| match route {
        "GET /leaderboards/{lb}/players/{p}/rank" => {
            reply::reply(200, async {
                let (lb, player) = http::board_player(req)?;
                let k = reads::parse_k(http::query(req, "k"))?;
                let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                let caller = http::caller(req);
                reads::admit(ctx, &caller).await?;
                reads::rank(ctx, &caller, &lb, &player, k, mode).await
            })
            .await
        }
        "GET /leaderboards/{lb}/players/{p}/live" => {
            reply::reply(200, async {
                let (lb, player) = http::board_player(req)?;
                let k = reads::parse_k(http::query(req, "k"))?;
                let caller = http::caller(req);
                reads::admit(ctx, &caller).await?;
                // Boxed: the reads' futures are deep enough already for one state machine.
                Box::pin(live::watch_near(ctx, &caller, &lb, &player, k)).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
