//! The best `n` players of a board.

use tracing::instrument;

use super::estimate::{Estimate, estimate};
use super::fallback::{history, rank_order_after};
use super::hot_reads::cached;
use super::names::{self, Known};
use super::params::board_for;
use super::reply::{Provenance, Source, TopReply, entries};
use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{IndexError, RankIndex, ReadStore, TOP_WINDOW};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start};

/// The best `n` players, placed under `mode` (the first is 1 in every mode).
#[instrument(skip(ctx))]
pub async fn top<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
    mode: RankMode,
) -> Result<TopReply, ServiceError> {
    let key = format!("top|{lb}|{n}|{}", mode.as_str());
    cached(
        (&ctx.hot.top, &ctx.last_known),
        (&ctx.boards, lb),
        key,
        false,
        || top_fresh(ctx, lb, n, mode),
    )
    .await
}

async fn top_fresh<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
    mode: RankMode,
) -> Result<TopReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let from_store = async |degraded| {
        let (keys, est) = best_from_store(ctx, lb, dir, n).await?;
        let meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
        Ok::<_, ServiceError>((keys, est.total, meta))
    };
    let read = match n <= TOP_WINDOW {
        true => match ctx.hot.windows.read(&ctx.index, lb, dir, n).await {
            Ok(Some(w)) => {
                let keys: Vec<_> = w.entries.iter().take(n as usize).cloned().collect();
                Ok((names::known(&keys, w.cards, w.metadata), keys, w.total))
            }
            Ok(None) => top_named(ctx, lb, dir, n).await,
            Err(e) => Err(e),
        },
        false => top_named(ctx, lb, dir, n).await,
    };
    let (known, keys, total, meta) = match read {
        Ok((_, _, 0)) if history(&board) => with_none(from_store(false).await?),
        Ok((known, keys, total)) => (known, keys, total, Provenance::now(Source::Redis, false)),
        Err(e) => with_none(from_store(rank_order_after(ctx, &board, &e).await?).await?),
    };
    let mut rows = entries(mode, Start::TOP, keys, None, board.scores);
    let from_index = meta.source == Source::Redis;
    let names_missing = !names::name(ctx, lb, &mut rows, known, from_index).await;
    Ok(TopReply {
        leaderboard_id: lb.clone(),
        top_n: n,
        rank_mode: mode,
        total,
        entries: rows,
        meta: Provenance {
            names_missing,
            ..meta
        },
    })
}

/// The best `n` from DynamoDB's rank order and the board's count (estimated past the
/// count cap), for a read the index cannot answer.
pub(crate) async fn best_from_store<S: ReadStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    n: u64,
) -> Result<(Vec<RankKey>, Estimate), ServiceError> {
    futures::try_join!(
        async {
            Ok::<_, ServiceError>(
                ctx.store
                    .ranked_after(BoardOrder::new(lb, dir), None, n)
                    .await?,
            )
        },
        estimate(&ctx.store, lb, dir, None),
    )
}

/// The best `n` straight from the index, with the cards it read with them.
async fn top_named<S, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    n: u64,
) -> Result<(Known, Vec<RankKey>, u64), IndexError> {
    let (keys, total, cards, metadata) = ctx.index.top_named(BoardOrder::new(lb, dir), n).await?;
    Ok((names::known(&keys, cards, metadata), keys, total))
}

/// A read from DynamoDB: no cards or metadata read with it.
fn with_none<T, U, V>((keys, total, meta): (T, U, V)) -> (Known, T, U, V) {
    (Known::default(), keys, total, meta)
}
