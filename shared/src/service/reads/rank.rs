//! A player's rank, score and neighbours.

use tracing::instrument;

use super::cache::cached;
use super::estimate::estimate;
use super::fallback::{degraded_by, history};
use super::reply::{Provenance, RankReply, Source, entries};
use crate::caller::Caller;
use crate::error::ServiceError;
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::service::Context;
use crate::store::{Around, RankIndex, ScoreStore};

/// The player's rank, score and up to `k` neighbours on each side. The player's own
/// read skips the reply cache, so it always shows their latest write.
#[instrument(skip(ctx))]
pub async fn rank<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<RankReply, ServiceError> {
    let key = format!("rank|{lb}|{player}|{k}");
    cached(
        &ctx.hot.rank,
        &ctx.last_known,
        key,
        caller.is(player),
        || rank_fresh(ctx, lb, player, k),
    )
    .await
}

async fn rank_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<RankReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let dir = board.policy.direction();
    let not_ranked = || ServiceError::NotRanked {
        lb: lb.clone(),
        player: player.clone(),
    };
    let (around, meta) = match ctx.index.around(lb, dir, player, k).await {
        Ok(Some(a)) => (Some(a), Provenance::now(Source::Redis, false)),
        Ok(None) if !history(&board) => return Err(not_ranked()),
        Ok(None) => (
            around_from_store(&ctx.store, lb, dir, player, k).await?,
            Provenance::now(Source::Dynamodb, false),
        ),
        Err(e) => (
            around_from_store(&ctx.store, lb, dir, player, k).await?,
            Provenance::now(Source::Dynamodb, degraded_by(ctx, &board, &e).await),
        ),
    };
    let around = around.ok_or_else(not_ranked)?;
    let meta = Provenance {
        rank_approximate: around.rank_approximate,
        total_approximate: around.total_approximate,
        ..meta
    };
    let neighbors = entries(around.first_rank, around.entries, Some(player));
    let me = neighbors
        .iter()
        .find(|e| e.is_self)
        .ok_or_else(not_ranked)?;
    Ok(RankReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        score: me.score,
        global_rank: around.rank,
        total: around.total,
        updated_at: me.updated_at.clone(),
        meta,
        neighbors,
    })
}

/// The player's slice of a board, from DynamoDB.
async fn around_from_store<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    player: &PlayerId,
    k: u64,
) -> Result<Option<Around>, ServiceError> {
    let Some(standing) = store.get_standing(lb, player).await? else {
        return Ok(None);
    };
    let me = RankKey {
        score: standing.score,
        reached_at: standing.reached_at,
        player: player.to_string(),
    };
    let (above, below, est) = futures::try_join!(
        async { Ok::<_, ServiceError>(store.ranked_before(lb, dir, &me, k).await?) },
        async { Ok(store.ranked_after(lb, dir, Some(&me), k).await?) },
        estimate(store, lb, dir, Some(&me)),
    )?;
    let first_rank = est.before + 1 - above.len() as u64;
    let entries = above.into_iter().chain([me]).chain(below).collect();
    Ok(Some(Around {
        rank: est.before + 1,
        total: est.total,
        first_rank,
        entries,
        rank_approximate: est.rank_approximate,
        total_approximate: est.total_approximate,
    }))
}
