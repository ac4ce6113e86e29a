//! The best `n` players of a board.

use tracing::instrument;

use super::cache::cached;
use super::estimate::estimate;
use super::fallback::{history, rank_order_after};
use super::params::board_for;
use super::reply::{Provenance, Source, TopReply, entries};
use crate::ids::LeaderboardId;
use crate::order::{RankMode, Start};
use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{RankIndex, ScoreStore, TOP_WINDOW};

/// The best `n` players, placed under `mode` (the first is 1 in every mode).
#[instrument(skip(ctx))]
pub async fn top<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
    mode: RankMode,
) -> Result<TopReply, ServiceError> {
    let key = format!("top|{lb}|{n}|{}", mode.as_str());
    cached(&ctx.hot.top, &ctx.last_known, key, false, || {
        top_fresh(ctx, lb, n, mode)
    })
    .await
}

async fn top_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
    mode: RankMode,
) -> Result<TopReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let from_store = async |degraded| {
        let (keys, est) = futures::try_join!(
            async { Ok::<_, ServiceError>(ctx.store.ranked_after(lb, dir, None, n).await?) },
            estimate(&ctx.store, lb, dir, None),
        )?;
        let meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
        Ok::<_, ServiceError>((keys, est.total, meta))
    };
    let read = match n <= TOP_WINDOW {
        true => match ctx.hot.windows.read(&ctx.index, lb, dir).await {
            Ok(Some(w)) => Ok((
                w.entries.iter().take(n as usize).cloned().collect(),
                w.total,
            )),
            Ok(None) => ctx.index.top(lb, dir, n).await,
            Err(e) => Err(e),
        },
        false => ctx.index.top(lb, dir, n).await,
    };
    let (keys, total, meta) = match read {
        Ok((_, 0)) if history(&board) => from_store(false).await?,
        Ok((keys, total)) => (keys, total, Provenance::now(Source::Redis, false)),
        Err(e) => from_store(rank_order_after(ctx, &board, &e).await?).await?,
    };
    Ok(TopReply {
        leaderboard_id: lb.clone(),
        top_n: n,
        rank_mode: mode,
        total,
        entries: entries(mode, Start::TOP, keys, None),
        meta,
    })
}
