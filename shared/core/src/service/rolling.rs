//! Rolling boards' results leaving the window (docs/schedules.md): the minute's sweep
//! (`rebuild::sweep`) finds, in DynamoDB's sparse `by_expiry` index, the rows whose
//! first bucket has left, and rewrites each: the live buckets, and the standing they
//! give (`rolling::refold`), a new version when it changed. A row left without a bucket
//! becomes a tombstone, as an operator's removal does: the player is off the board, and
//! a later result starts them over at a newer version. Every rewrite is conditional on
//! the row's revision, as results' writes are, so a result racing the sweep makes one of
//! them read the row again: nothing is lost or counted twice. The index follows through
//! the write-through here and the table's stream, version-checked as always.

use std::time::Instant;

use tracing::{instrument, warn};

use super::Context;
use super::ServiceError;
use crate::store::{
    Buckets, CommitOutcome, Consistency, IndexEntry, RankIndex, RebuildStore, Removal, Roll, RowAt,
    StandingStore,
};
use leaderboard_rules::board::{Board, Fold};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::rolling::refold;

/// Rows read per shard per query.
const PAGE: u32 = 200;
/// Optimistic attempts at one row racing results.
const MAX_ATTEMPTS: u32 = 16;

/// Rolls every row of `board` whose first bucket has left by `now`, until `deadline`
/// (the rest waits for the next sweep, still due); returns how many rows were
/// rewritten. Not a rolling board: nothing.
#[instrument(skip_all, fields(board = %board.leaderboard_id))]
pub async fn age<S: StandingStore + RebuildStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    now: i64,
    deadline: Instant,
) -> Result<u64, ServiceError> {
    if board.rolling().is_none() {
        return Ok(0);
    }
    let mut rolled = 0;
    for shard in 0..ctx.store.shard_count() {
        loop {
            let due = (ctx.store)
                .expiring(&board.leaderboard_id, shard, now, PAGE)
                .await?;
            let mut moved = 0;
            for player in &due {
                if Instant::now() >= deadline {
                    return Ok(rolled + moved);
                }
                moved += u64::from(roll(ctx, board, player, now).await?);
            }
            rolled += moved;
            // The rows rolled left the index's range (their next expiry is later), so
            // the next query starts over; a short page was the last, and a page of rows
            // the index has not caught up with (rolled already) waits for the next sweep.
            if due.len() < PAGE as usize || moved == 0 {
                break;
            }
        }
    }
    Ok(rolled)
}

/// Rolls one player's row: drops the buckets that have left by `now`. True when it
/// wrote the row.
async fn roll<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    player: &PlayerId,
    now: i64,
) -> Result<bool, ServiceError> {
    let Some(r) = board.rolling() else {
        return Ok(false);
    };
    let lb = &board.leaderboard_id;
    let dir = board.policy.direction();
    let index_expire_at = ctx.settings.index_expire_at(board);
    for attempt in 0..MAX_ATTEMPTS {
        let row = ctx.store.get_row(lb, player, Consistency::Strong).await?;
        let Some(current) = row.standing.as_ref() else {
            return Ok(false);
        };
        let live = r.live(&row.buckets, now);
        if live.len() == row.buckets.len() {
            // Nothing left yet (a result moved the row on since it was listed).
            return Ok(false);
        }
        let columns = &board.scores.tiebreaks;
        let folded = refold(
            board.policy,
            columns,
            Some(current),
            &live,
            &current.last_match_id,
            now,
        )?;
        let at = RowAt {
            board: lb,
            player,
            direction: dir,
            row: &row,
            index_expire_at,
        };
        let (outcome, entry) = match folded {
            None => {
                let removal = Removal {
                    at,
                    removed_at: now,
                };
                let entry = removal.index_entry();
                (ctx.store.remove_standing(&removal).await?, Some(entry))
            }
            Some(fold) => {
                let standing = match &fold {
                    Fold::Applied(s) => s,
                    Fold::Unchanged => current,
                };
                let roll = Roll {
                    at,
                    standing,
                    buckets: Buckets {
                        buckets: &live,
                        next_expiry: r.next_expiry(&live),
                    },
                    ranked: board.rank_index,
                };
                let entry = matches!(fold, Fold::Applied(_)).then(|| {
                    IndexEntry::standing(lb, dir, player.as_str(), standing, index_expire_at)
                });
                (ctx.store.roll(&roll).await?, entry)
            }
        };
        if outcome == CommitOutcome::Committed {
            // The write-through; the stream applies it anyway.
            if let Some(entry) = entry
                && let Err(error) = ctx.index.apply(&entry).await
            {
                warn!(%error, "rank index unavailable; the stream will catch it up");
            }
            return Ok(true);
        }
        tokio::time::sleep(super::backoff(attempt)).await;
    }
    Err(ServiceError::Contention)
}
