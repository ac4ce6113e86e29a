//! A player's rank, score and neighbours.

use tracing::instrument;

use super::estimate::{Estimate, estimate, place};
use super::fallback::{history, rank_order_after};
use super::hot_reads::cached;
use super::names;
use super::params::board_for;
use super::reply::{Entry, Provenance, RankReply, Source, entries};
use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{Around, RankIndex, RankedReads, ReadStore, SketchStore, StandingStore};
use leaderboard_rules::caller::Caller;
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start};

/// The player's rank under `mode`, score and up to `k` neighbours on each side. The
/// player's own read skips the reply cache, so it always shows their latest write.
#[instrument(skip(ctx))]
pub async fn rank<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
    mode: RankMode,
) -> Result<RankReply, ServiceError> {
    let key = format!("rank|{lb}|{player}|{k}|{}", mode.as_str());
    cached(
        (&ctx.hot.rank, &ctx.last_known),
        (&ctx.boards, lb),
        key,
        caller.is(player),
        || rank_fresh(ctx, lb, player, k, mode),
    )
    .await
}

async fn rank_fresh<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
    mode: RankMode,
) -> Result<RankReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let not_ranked = || ServiceError::NotRanked {
        lb: lb.clone(),
        player: player.clone(),
    };
    // One row above at least, for `points_to_next`; trimmed back to `k` below.
    let wide = k.max(1);
    let (around, meta) = match ctx
        .index
        .around(BoardOrder::new(lb, dir), player, wide, mode)
        .await
    {
        Ok(Some(a)) => (Some(a), Provenance::now(Source::Redis, false)),
        Ok(None) if !history(&board) => return Err(not_ranked()),
        Ok(None) => (
            around_from_store(&ctx.store, lb, dir, player, wide, mode).await?,
            Provenance::now(Source::Dynamodb, false),
        ),
        Err(e) => {
            let degraded = rank_order_after(ctx, &board, &e).await?;
            (
                around_from_store(&ctx.store, lb, dir, player, wide, mode).await?,
                Provenance::now(Source::Dynamodb, degraded),
            )
        }
    };
    let mut around = around.ok_or_else(not_ranked)?;
    let known = names::known(&around.entries, around.cards.take(), around.metadata.take());
    let meta = Provenance {
        rank_approximate: around.rank_approximate,
        total_approximate: around.total_approximate,
        ..meta
    };
    let start = Start {
        rank: around.first_rank,
        place: around.first_place,
    };
    let rows = entries(mode, start, around.entries, Some(player), board.scores);
    let (points_to_next, mut neighbors) = standing_in(rows, k).ok_or_else(not_ranked)?;
    let from_index = meta.source == Source::Redis;
    let names_missing = !names::name(ctx, lb, &mut neighbors, known, from_index).await;
    let me = neighbors
        .iter()
        .find(|e| e.is_self)
        .ok_or_else(not_ranked)?;
    Ok(RankReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        score: me.score,
        subscores: me.subscores.clone(),
        global_rank: me.rank,
        rank_mode: mode,
        total: around.total,
        percentile: percentile(around.rank, around.total),
        points_to_next,
        updated_at: me.updated_at.clone(),
        meta: Provenance {
            names_missing,
            ..meta
        },
        neighbors,
    })
}

/// The points the player needs to pass the player directly above (`None` at rank 1 or
/// when that row is not in `rows`), and `rows` trimmed to `k` on each side of the
/// player's own; `None` if the player's row is missing. Passing needs one point more
/// than the gap: an equal score reached later ranks behind.
fn standing_in(mut rows: Vec<Entry>, k: u64) -> Option<(Option<Shown>, Vec<Entry>)> {
    let me = rows.iter().position(|e| e.is_self)?;
    // One unit of the board's last place more than the gap (0.001 on 3 decimals).
    let points = me.checked_sub(1).map(|above| {
        let (them, mine) = (rows[above].score, rows[me].score);
        mine.format.show_scaled((them.get() - mine.get()).abs() + 1)
    });
    let lo = me.saturating_sub(k as usize);
    let hi = (me + k as usize + 1).min(rows.len());
    Some((points, rows.drain(lo..hi).collect()))
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
async fn around_from_store<S: StandingStore + RankedReads + SketchStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    player: &PlayerId,
    k: u64,
    mode: RankMode,
) -> Result<Option<Around>, ServiceError> {
    let Some(standing) = store.get_standing(lb, player).await? else {
        return Ok(None);
    };
    let me = standing.key(player.as_str());
    let (above, below, est) = futures::try_join!(
        async {
            Ok::<_, ServiceError>(
                store
                    .ranked_before(BoardOrder::new(lb, dir), &me, k)
                    .await?,
            )
        },
        async {
            Ok(store
                .ranked_after(BoardOrder::new(lb, dir), Some(&me), k)
                .await?)
        },
        estimate(store, lb, dir, Some(&me)),
    )?;
    let first_rank = est.before + 1 - above.len() as u64;
    let entries: Vec<RankKey> = above.into_iter().chain([me]).chain(below).collect();
    let first = Estimate {
        before: first_rank - 1,
        ..est
    };
    let (first_place, approximate) = place(store, lb, dir, &entries[0], &first, mode).await?;
    Ok(Some(Around {
        rank: est.before + 1,
        total: est.total,
        first_rank,
        first_place,
        entries,
        rank_approximate: approximate,
        total_approximate: first.total_approximate,
        cards: None,
        metadata: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaderboard_rules::decimal::ScoreFormat;
    use leaderboard_rules::order::test_key as key;

    #[test]
    fn percentiles_count_the_player_and_everyone_below() {
        assert_eq!(percentile(1, 4), 100.0);
        assert_eq!(percentile(4, 4), 25.0);
        assert_eq!(percentile(2, 3), 66.67);
        assert_eq!(percentile(1, 0), 0.0);
    }

    #[test]
    fn points_to_next_is_one_more_than_the_gap_and_the_rows_are_trimmed_to_k() {
        let me = PlayerId::parse("me").unwrap();
        let rows = |mode| {
            let keys = vec![key("a", 90), key("me", 80), key("c", 70)];
            let start = Start { rank: 4, place: 4 };
            entries(mode, start, keys, Some(&me), ScoreFormat::default())
        };
        let (points, trimmed) = standing_in(rows(RankMode::Unique), 0).unwrap();
        assert_eq!(points.map(Shown::get), Some(11));
        assert_eq!((trimmed[0].rank, trimmed.len()), (5, 1));
        let (points, trimmed) = standing_in(rows(RankMode::Unique), 1).unwrap();
        assert_eq!((points.map(Shown::get), trimmed.len()), (Some(11), 3));
        let top = vec![key("me", 80), key("c", 70)];
        let top = entries(
            RankMode::Unique,
            Start::TOP,
            top,
            Some(&me),
            ScoreFormat::default(),
        );
        assert!(standing_in(top, 1).unwrap().0.is_none());
        let nobody = entries(
            RankMode::Unique,
            Start::TOP,
            vec![key("c", 70)],
            Some(&me),
            ScoreFormat::default(),
        );
        assert!(standing_in(nobody, 1).is_none());
    }

    #[test]
    fn on_a_decimal_board_points_to_next_is_the_gap_and_one_unit_of_the_last_place() {
        let me = PlayerId::parse("me").unwrap();
        let three = ScoreFormat::asked(Some(3), None, None).unwrap();
        let keys = vec![key("a", 90_000), key("me", 80_250)];
        let rows = entries(RankMode::Unique, Start::TOP, keys, Some(&me), three);
        let (points, rows) = standing_in(rows, 1).unwrap();
        let shown = serde_json::to_string(&(points, rows[1].score)).unwrap();
        assert_eq!(shown, "[9.751,80.250]");
    }

    #[test]
    fn a_tie_above_costs_one_point_and_shares_the_place_on_request() {
        let me = PlayerId::parse("me").unwrap();
        // "a" and "me" share 80; "a" sorts first (same reached-at, "a" < "me").
        let keys = || vec![key("a", 80), key("me", 80), key("c", 70)];
        let start = Start { rank: 2, place: 2 };
        let (points, rows) = standing_in(
            entries(
                RankMode::Competition,
                start,
                keys(),
                Some(&me),
                ScoreFormat::default(),
            ),
            1,
        )
        .unwrap();
        assert_eq!(points.map(Shown::get), Some(1));
        let ranks: Vec<u64> = rows.iter().map(|e| e.rank).collect();
        assert_eq!(ranks, [2, 2, 4]);
        let (_, rows) = standing_in(
            entries(
                RankMode::Dense,
                start,
                keys(),
                Some(&me),
                ScoreFormat::default(),
            ),
            1,
        )
        .unwrap();
        let ranks: Vec<u64> = rows.iter().map(|e| e.rank).collect();
        assert_eq!(ranks, [2, 2, 3]);
    }
}
