//! `GET /leaderboards/{lb}/players/{p}/friends-rank?k=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::reply;
use leaderboard_core::service::Context;
use leaderboard_core::service::reads;
use leaderboard_core::store::{FriendsSource, RankIndex, RateCounter, ScoreStore};

#[cfg(test)]
mod tests;

pub struct Deps<S, I, F> {
    pub ctx: Context<S, I>,
    pub friends: F,
}

pub async fn handle<S: ScoreStore, I: RankIndex + RateCounter, F: FriendsSource>(
    deps: &Deps<S, I, F>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    let req = &event.payload;
    let reply = reply::reply(200, async {
        let (lb, player) = http::board_player(req)?;
        let k = reads::parse_k(http::query(req, "k"))?;
        let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
        let caller = http::caller(req);
        reads::admit(&deps.ctx, &caller).await?;
        reads::friends_rank(&deps.ctx, &deps.friends, &caller, &lb, &player, k, mode).await
    });
    Ok(reply::stamped(req, reply.await))
}
