//! What operators do to players, every action kept in the audit trail: take a standing
//! off a board ([`remove`]), ban a player from a game ([`ban`]), erase a player
//! everywhere ([`erase`]), and page through the trail ([`audit`]).
//!
//! A removal replaces the standing with a tombstone at the next version (in DynamoDB
//! and, by the stream or at once, in the index), so a delayed or replayed stream record
//! cannot bring the entry back, and the player's next result starts them over at a
//! newer version. Receipts stay: a retried match answers as it did. An erasure deletes
//! the rows themselves and leaves nothing of the player behind.

pub mod audit;
pub mod ban;
pub mod erase;
pub mod remove;

use leaderboard_rules::page::Paging;
use std::time::Instant;

use serde::Serialize;
use tracing::warn;

use super::Context;
use crate::service::ServiceError;
use crate::store::{
    BoardStore, CommitOutcome, Consistency, IndexEntry, RankIndex, Removal, Row, RowAt,
    StandingStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::order::{BoardOrder, RankMode};
use leaderboard_rules::time::now_ms;

/// What taking a standing off a board found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TakenOff {
    /// Written as the board writes scores (docs/decimals.md).
    pub previous_score: Shown,
    /// The player's rank just before, when the index could say.
    pub previous_rank: Option<u64>,
    /// The tombstone's version.
    pub version: u64,
}

/// Optimistic attempts at replacing a standing that keeps changing under us.
const MAX_ATTEMPTS: u32 = 32;

/// How long after a window closes a ban still fences its board: longer than any write
/// that passed the window's check before it closed can take to land.
const FENCE_AFTER_CLOSE_MS: i64 = 10 * 60 * 1000;

/// Whether a ban must fence `board` at `now` (see [`take_off`]): it may still take a
/// result.
pub(super) fn needs_fence(board: &Board, now: i64) -> bool {
    board
        .closes_at()
        .is_none_or(|at| now < at + FENCE_AFTER_CLOSE_MS)
}

/// Replaces the player's row on `board` with its tombstone (retrying while concurrent
/// results move it), then takes it out of the index at once (best effort: the stream
/// does it anyway). `None` when the player has no standing there.
///
/// With `fence`, the tombstone is written even where the player has no standing (or
/// already a tombstone): a ban's fence. A result that read the row before the ban and
/// writes after the fence finds the row's revision moved, reads again and meets the
/// ban (docs/cost.md).
async fn take_off<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    player: &PlayerId,
    fence: bool,
) -> Result<Option<TakenOff>, ServiceError> {
    let lb = &board.leaderboard_id;
    let dir = board.policy.direction();
    let previous_rank = match ctx
        .index
        .around(BoardOrder::new(lb, dir), player, 0, RankMode::Unique)
        .await
    {
        Ok(a) => a.map(|a| a.rank),
        Err(_) => None,
    };
    let expire_at = ctx.settings.index_expire_at(board);
    let Some(gone) = tombstone(&ctx.store, board, player, expire_at, fence).await? else {
        return Ok(None);
    };
    let Some(standing) = gone.row.standing else {
        return Ok(None);
    };
    if let Err(error) = ctx.index.apply_many(&[gone.entry]).await {
        warn!(%error, "index unavailable; the stream will take the entry out");
    }
    Ok(Some(TakenOff {
        previous_score: board.scores.show(standing.score),
        previous_rank,
        version: gone.version,
    }))
}

/// A row replaced by its tombstone: the row as it was, the tombstone's version and the
/// index entry that takes the player off the board.
pub(crate) struct Tombstoned {
    pub row: Row,
    pub version: u64,
    pub entry: IndexEntry,
}

/// Replaces the player's row on `board` with its tombstone, keeping its receipts, read
/// strongly and retried while concurrent writes move it (a board reset takes its
/// standings off this way too). `None` when nothing was written: the player has no
/// standing and no `fence` is asked for.
pub(crate) async fn tombstone<S: StandingStore>(
    store: &S,
    board: &Board,
    player: &PlayerId,
    index_expire_at: Option<i64>,
    fence: bool,
) -> Result<Option<Tombstoned>, ServiceError> {
    let lb = &board.leaderboard_id;
    for attempt in 0..MAX_ATTEMPTS {
        let row = store.get_row(lb, player, Consistency::Strong).await?;
        if row.standing.is_none() && !fence {
            return Ok(None);
        }
        let removal = Removal {
            at: RowAt {
                board: lb,
                player,
                direction: board.policy.direction(),
                row: &row,
                index_expire_at,
            },
            removed_at: now_ms(),
        };
        match store.remove_standing(&removal).await? {
            CommitOutcome::Committed => {
                let (version, entry) = (removal.version(), removal.index_entry());
                return Ok(Some(Tombstoned {
                    row,
                    version,
                    entry,
                }));
            }
            // A removal counts no attempt: only the row can have moved.
            CommitOutcome::StandingChanged | CommitOutcome::AttemptRefused => {
                tokio::time::sleep(super::backoff(attempt)).await
            }
        }
    }
    Err(ServiceError::Contention)
}

/// How far a sweep over many boards got.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sweep {
    /// Every board was visited.
    pub complete: bool,
    pub boards_scanned: u64,
    /// Boards the player had a row on.
    pub entries: u64,
    /// Where to resume (the next call with `cursor` goes on from here); `None` when
    /// complete.
    pub cursor: Option<String>,
}

/// Boards read per page of a sweep.
const SWEEP_PAGE: u32 = 100;

/// Visits every board whose list key starts with `prefix`, after `cursor`, calling `f`
/// on each, until done or `deadline`; `f` says whether the board had something of the
/// player's.
async fn sweep<S, I, F, Fut>(
    ctx: &Context<S, I>,
    prefix: &str,
    cursor: Option<String>,
    deadline: Instant,
    mut f: F,
) -> Result<Sweep, ServiceError>
where
    S: BoardStore,
    F: FnMut(Board) -> Fut,
    Fut: std::future::Future<Output = Result<bool, ServiceError>>,
{
    let mut out = Sweep::default();
    let mut after = cursor;
    loop {
        if Instant::now() >= deadline {
            out.cursor = after;
            return Ok(out);
        }
        let page = ctx
            .store
            .list_boards(prefix, Paging::new(after.as_deref(), SWEEP_PAGE))
            .await?;
        for board in page.boards {
            let key = board.list_key();
            out.boards_scanned += 1;
            if f(board).await? {
                out.entries += 1;
            }
            after = Some(key);
        }
        if page.next.is_none() {
            out.complete = true;
            return Ok(out);
        }
    }
}
