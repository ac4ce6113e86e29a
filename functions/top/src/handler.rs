//! `GET /leaderboards/{lb}/top?n=&rank_mode=`,
//! `GET /leaderboards/{lb}/ranks?limit=&cursor=|from_rank=&rank_mode=`,
//! `GET /leaderboards/{lb}/entries?players=&rank_mode=` and the live top view,
//! `GET /leaderboards/{lb}/live/top?n=`.

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::reply;
use leaderboard_core::service::Context;
use leaderboard_core::service::live;
use leaderboard_core::service::reads::{self, Rows};
use leaderboard_core::store::{LiveViews, RankIndex, RateCounter, ScoreStore};
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::ids::LeaderboardId;

#[cfg(test)]
mod tests;

pub struct Deps<S, I> {
    pub ctx: Context<S, I>,
    pub signer: CursorSigner,
}

pub async fn handle<S: ScoreStore, I: RankIndex + RateCounter + LiveViews>(
    deps: &Deps<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    reply::routed(&event, async |req, route| match route {
        "GET /leaderboards/{lb}/top" => {
            reply::reply(200, async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let n = reads::parse_n(http::query(req, "n"))?;
                let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                let caller = http::caller(req);
                reads::admit(&deps.ctx, &caller).await?;
                Ok(reads::top(&deps.ctx, &lb, n, mode).await?.seen_by(&caller))
            })
            .await
        }
        "GET /leaderboards/{lb}/ranks" => {
            reply::reply(200, async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let limit = reads::parse_limit(http::query(req, "limit"))?;
                let start =
                    reads::parse_start(http::query(req, "from_rank"), http::query(req, "cursor"))?;
                let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                let caller = http::caller(req);
                reads::admit(&deps.ctx, &caller).await?;
                let page = reads::ranks_from(&deps.ctx, &deps.signer, &lb, start, limit, mode);
                Ok(page.await?.seen_by(&caller))
            })
            .await
        }
        "GET /leaderboards/{lb}/entries" => {
            reply::reply(200, async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let players = reads::parse_players(http::query_list(req, "players").as_deref())?;
                let mode = reads::parse_mode(http::query(req, "rank_mode"))?;
                let caller = http::caller(req);
                reads::admit(&deps.ctx, &caller).await?;
                Ok(reads::entries(&deps.ctx, &lb, &players, mode)
                    .await?
                    .seen_by(&caller))
            })
            .await
        }
        "GET /leaderboards/{lb}/live/top" => {
            reply::reply(200, async {
                let lb = http::path(req, "lb", LeaderboardId::parse)?;
                let n = reads::parse_n(http::query(req, "n"))?;
                reads::admit(&deps.ctx, &http::caller(req)).await?;
                // Boxed: the reads' futures are deep enough already for one state machine.
                Box::pin(live::watch_top(&deps.ctx, &lb, n)).await
            })
            .await
        }
        _ => reply::unknown_route(req),
    })
    .await
}
