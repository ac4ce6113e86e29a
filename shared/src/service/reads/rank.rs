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
    // One row above at least, for `points_to_next`; trimmed back to `k` below.
    let wide = k.max(1);
    let (around, meta) = match ctx.index.around(lb, dir, player, wide).await {
        Ok(Some(a)) => (Some(a), Provenance::now(Source::Redis, false)),
        Ok(None) if !history(&board) => return Err(not_ranked()),
        Ok(None) => (
            around_from_store(&ctx.store, lb, dir, player, wide).await?,
            Provenance::now(Source::Dynamodb, false),
        ),
        Err(e) => (
            around_from_store(&ctx.store, lb, dir, player, wide).await?,
            Provenance::now(Source::Dynamodb, degraded_by(ctx, &board, &e).await),
        ),
    };
    let around = around.ok_or_else(not_ranked)?;
    let meta = Provenance {
        rank_approximate: around.rank_approximate,
        total_approximate: around.total_approximate,
        ..meta
    };
    let (points_to_next, around) = standing_in(around, player, k);
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
        percentile: percentile(around.rank, around.total),
        points_to_next,
        updated_at: me.updated_at.clone(),
        meta,
        neighbors,
    })
}

/// The points the player needs to pass the player directly above (`None` at rank 1 or
/// when that row is not in `around`), and `around` trimmed to `k` rows on each side.
/// Passing needs one point more than the gap: an equal score reached later ranks
/// behind.
fn standing_in(mut around: Around, player: &PlayerId, k: u64) -> (Option<i64>, Around) {
    let me = (around.rank - around.first_rank) as usize;
    let points = me
        .checked_sub(1)
        .and_then(|above| around.entries.get(above))
        .zip(around.entries.get(me))
        .filter(|(_, mine)| mine.player == player.as_str())
        .map(|(above, mine)| (above.score.get() - mine.score.get()).abs() + 1);
    let lo = me.saturating_sub(k as usize);
    let hi = (me + k as usize + 1).min(around.entries.len());
    around.entries = around.entries.drain(lo..hi).collect();
    around.first_rank += lo as u64;
    (points, around)
}

/// The share of the board at or below a rank, in percent with two decimals.
fn percentile(rank: u64, total: u64) -> f64 {
    if total == 0 {
        return 0.0;
    }
    let share = (total + 1).saturating_sub(rank) as f64 / total as f64;
    (share * 10_000.0).round() / 100.0
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::test_key as key;

    #[test]
    fn percentiles_count_the_player_and_everyone_below() {
        assert_eq!(percentile(1, 4), 100.0);
        assert_eq!(percentile(4, 4), 25.0);
        assert_eq!(percentile(2, 3), 66.67);
        assert_eq!(percentile(1, 0), 0.0);
    }

    #[test]
    fn points_to_next_is_one_more_than_the_gap_and_the_rows_are_trimmed_to_k() {
        let rows = vec![key("a", 90), key("me", 80), key("c", 70)];
        let around = |first_rank, entries: Vec<RankKey>| Around {
            rank: 5,
            total: 9,
            first_rank,
            entries,
            rank_approximate: false,
            total_approximate: false,
        };
        let me = PlayerId::parse("me").unwrap();
        let (points, trimmed) = standing_in(around(4, rows.clone()), &me, 0);
        assert_eq!(points, Some(11));
        assert_eq!((trimmed.first_rank, trimmed.entries.len()), (5, 1));
        let (points, trimmed) = standing_in(around(4, rows), &me, 1);
        assert_eq!((points, trimmed.entries.len()), (Some(11), 3));
        let top = Around {
            rank: 1,
            ..around(1, vec![key("me", 80), key("c", 70)])
        };
        assert_eq!(standing_in(top, &me, 1).0, None);
    }
}
