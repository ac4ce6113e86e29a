//! Rebuilding a board's rank index from DynamoDB, exactly and resumably.
//!
//! 1. Mark the board `rebuilding` in Redis under a fresh generation id and record a
//!    checkpoint in DynamoDB. From then on every apply (write-through and projector)
//!    also writes the rebuild's keys, version-checked.
//! 2. Read the board's standings shard by shard, page by page (strongly consistent), and
//!    load each page into the rebuild's keys in one pipeline, version-checked, so a
//!    snapshot row never overwrites a newer standing that an apply already put there.
//!    The checkpoint advances after every page; when the time budget runs out the
//!    invocation returns `in_progress` and the next one resumes from the checkpoint.
//! 3. Swap the rebuild's keys in atomically (one script: RENAME both, marker `ok`).
//!    Every write committed before the snapshot read its row is in the snapshot; every
//!    write applied after step 1 is in both key sets; so the swapped-in index equals
//!    DynamoDB, and nothing committed goes missing at the swap.
//!
//! If Redis is wiped during a rebuild, the swap finds another (or no) generation and
//! refuses; the checkpoint is dropped and the next run starts over. While a board is
//! rebuilding or unmarked, reads are served from DynamoDB, flagged degraded.
//!
//! Only one rebuild works on a board at a time: it holds the board's lease in Redis
//! ([`LEASE_TTL`], renewed after every page), so the sweep, the repair function and an
//! operator's call cannot load the same board twice over; a rebuild that dies frees the
//! board when its lease runs out.
//!
//! `{all: true}` sweeps every board that is not closed: boards whose index is missing,
//! stale (its marker disagrees with the node it is on, see `leaderboard::adapters::redis`) or whose
//! rebuild was interrupted are rebuilt, within the same time budget; boards too big to
//! count get their rank sketch refreshed (see [`super::sketch`]).

use leaderboard_rules::page::Paging;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::{info, instrument, warn};

use super::Context;
use crate::service::ServiceError;
use crate::store::{
    BoardStore, Checkpoint, Health, IndexUpkeep, IndexWrites, RankIndex, RebuildStart,
    RebuildStore, SketchStore, StandingStore,
};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::now_ms;

/// Standings read and loaded per round trip.
pub const PAGE: u32 = 1_000;
/// How long a board's rebuild lease lasts without renewal (it is renewed after every
/// page, which takes well under a second).
pub const LEASE_TTL: Duration = Duration::from_secs(30);

/// Body of `POST /admin/rebuild`, and the direct/scheduled invocation's payload.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RebuildRequest {
    pub leaderboard_id: Option<LeaderboardId>,
    #[serde(default)]
    pub all: bool,
    /// Caps this invocation's work (ms); the Lambda deadline caps it anyway.
    pub budget_ms: Option<u64>,
}

/// How one board's rebuild ended in this invocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Swapped in: the index equals DynamoDB.
    Rebuilt,
    /// Out of time; the next invocation resumes from the checkpoint.
    InProgress,
    /// Redis was wiped (or the board's node changed) during the rebuild; the next
    /// invocation starts over.
    Restarted,
    /// Another rebuild holds the board's lease and is working on it.
    Busy,
}

#[derive(Debug, Clone, Serialize)]
pub struct BoardRebuild {
    pub leaderboard_id: LeaderboardId,
    pub outcome: Outcome,
    /// Standings loaded by this rebuild so far (all invocations).
    pub loaded: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RebuildReport {
    /// True when nothing is left to do.
    pub done: bool,
    pub boards: Vec<BoardRebuild>,
}

/// Runs a request until done or `deadline`.
pub async fn run<S: BoardStore + StandingStore + RebuildStore + SketchStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: RebuildRequest,
    deadline: Instant,
) -> Result<RebuildReport, ServiceError> {
    // JSON's exact integers (openapi.yaml's bound), like every integer the API takes.
    const MAX_BUDGET_MS: u64 = (1 << 53) - 1;
    if req.budget_ms.is_some_and(|ms| ms > MAX_BUDGET_MS) {
        return Err(
            DomainError::invalid("budget_ms", format!("must be 0 to {MAX_BUDGET_MS}")).into(),
        );
    }
    match (req.leaderboard_id, req.all) {
        (Some(lb), false) => {
            let one = rebuild_board(ctx, &lb, deadline).await?;
            Ok(RebuildReport {
                done: one.outcome == Outcome::Rebuilt,
                boards: vec![one],
            })
        }
        (None, true) => sweep(ctx, deadline).await,
        _ => Err(
            DomainError::invalid("leaderboard_id", "give either leaderboard_id or all: true")
                .into(),
        ),
    }
}

/// A name no other rebuild (or invocation) uses.
fn new_generation() -> String {
    super::run_id()
}

/// Rebuilds one board, resuming its checkpoint if there is one, under the board's
/// lease ([`Outcome::Busy`] when another rebuild holds it).
#[instrument(skip(ctx, deadline))]
pub async fn rebuild_board<S: BoardStore + RebuildStore, I: IndexWrites + IndexUpkeep>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    deadline: Instant,
) -> Result<BoardRebuild, ServiceError> {
    let owner = new_generation();
    if !ctx.index.acquire_lease(lb, &owner, LEASE_TTL).await? {
        info!(board = %lb, "another rebuild holds the board");
        return Ok(BoardRebuild {
            leaderboard_id: lb.clone(),
            outcome: Outcome::Busy,
            loaded: 0,
        });
    }
    let result = rebuild_leased(ctx, lb, &owner, deadline).await;
    if let Err(error) = ctx.index.release_lease(lb, &owner).await {
        // It runs out by itself within LEASE_TTL.
        warn!(board = %lb, %error, "could not release the rebuild lease");
    }
    result
}

async fn rebuild_leased<S: BoardStore + RebuildStore, I: IndexWrites + IndexUpkeep>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    owner: &str,
    deadline: Instant,
) -> Result<BoardRebuild, ServiceError> {
    let board = ctx
        .store
        .get_board(lb)
        .await?
        .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
    let expire_at = ctx.settings.index_expire_at(&board);
    let mut cp = start_or_resume(ctx, &board).await?;
    let report = |outcome, cp: &Checkpoint| BoardRebuild {
        leaderboard_id: lb.clone(),
        outcome,
        loaded: cp.loaded,
    };
    let mut pages = 0;
    while cp.shard < ctx.store.shard_count() {
        // Every invocation loads at least one page, so a tiny budget still progresses.
        if pages > 0 && Instant::now() >= deadline {
            info!(board = %lb, loaded = cp.loaded, shard = cp.shard, "rebuild paused at its time budget");
            return Ok(report(Outcome::InProgress, &cp));
        }
        let (entries, next) = ctx
            .store
            .standings_page(lb, cp.shard, Paging::new(cp.after.as_deref(), PAGE))
            .await?;
        ctx.index.load(lb, &entries).await?;
        cp.loaded += entries.len() as u64;
        match next {
            Some(after) => cp.after = Some(after),
            None => {
                cp.shard += 1;
                cp.after = None;
            }
        }
        ctx.store.put_checkpoint(lb, &cp).await?;
        if !ctx.index.acquire_lease(lb, owner, LEASE_TTL).await? {
            warn!(board = %lb, "lost the rebuild lease; leaving the board to its holder");
            return Ok(report(Outcome::Busy, &cp));
        }
        pages += 1;
    }
    let swapped = ctx.index.finish_rebuild(lb, &cp.gen_id, expire_at).await?;
    ctx.store.delete_checkpoint(lb).await?;
    if !swapped {
        warn!(board = %lb, "the index was wiped, or its node changed, during the rebuild; starting over next time");
        return Ok(report(Outcome::Restarted, &cp));
    }
    info!(board = %lb, loaded = cp.loaded, ms = now_ms() - cp.started_at, "rebuild swapped in");
    ctx.boards.forget(lb);
    Ok(report(Outcome::Rebuilt, &cp))
}

/// Where the board's rebuild starts: its checkpoint if the previous run's keys are
/// still there, else a fresh start that reads everything again.
async fn start_or_resume<S: RebuildStore, I: IndexWrites + IndexUpkeep>(
    ctx: &Context<S, I>,
    board: &leaderboard_rules::board::Board,
) -> Result<Checkpoint, ServiceError> {
    let lb = &board.leaderboard_id;
    let existing = ctx.store.get_checkpoint(lb).await?;
    let mut cp = existing.clone().unwrap_or_else(|| Checkpoint {
        gen_id: new_generation(),
        shard: 0,
        after: None,
        loaded: 0,
        started_at: now_ms(),
    });
    let resumed = ctx
        .index
        .begin_rebuild(
            lb,
            &cp.gen_id,
            RebuildStart {
                fresh: existing.is_none(),
                dense_ranks: board.dense_ranks,
            },
        )
        .await?;
    if !resumed {
        cp.shard = 0;
        cp.after = None;
        cp.loaded = 0;
        ctx.store.put_checkpoint(lb, &cp).await?;
    }
    Ok(cp)
}

/// Every board definition, all pages of the board list.
pub(crate) async fn all_boards<S: BoardStore>(
    store: &S,
) -> Result<Vec<leaderboard_rules::board::Board>, ServiceError> {
    let mut boards = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store
            .list_boards("", Paging::new(after.as_deref(), 200))
            .await?;
        boards.extend(page.boards);
        after = page.next;
        if after.is_none() {
            return Ok(boards);
        }
    }
}

/// Finds every board that is not closed and whose index is missing, stale or
/// mid-rebuild, and rebuilds them while time remains.
#[instrument(skip_all)]
pub async fn sweep<S: BoardStore + StandingStore + RebuildStore + SketchStore, I: RankIndex>(
    ctx: &Context<S, I>,
    deadline: Instant,
) -> Result<RebuildReport, ServiceError> {
    let mut boards = Vec::new();
    let mut after: Option<String> = None;
    let mut done = true;
    loop {
        let page = ctx
            .store
            .list_boards("", Paging::new(after.as_deref(), 200))
            .await?;
        let now = now_ms();
        let open: Vec<&leaderboard_rules::board::Board> = page
            .boards
            .iter()
            .filter(|b| b.effective_status(now) != leaderboard_rules::board::BoardStatus::Closed)
            .collect();
        // Rolling boards' results that left the window leave their standings first: that
        // needs DynamoDB only (the index follows), whatever Redis's health.
        for board in open.iter().filter(|b| b.rolling().is_some()) {
            if let Err(error) = super::rolling::age(ctx, board, now, deadline).await {
                warn!(board = %board.leaderboard_id, %error, "could not roll the board; the next sweep will");
            }
        }
        let ids: Vec<LeaderboardId> = open.iter().map(|b| b.leaderboard_id.clone()).collect();
        let health = ctx.index.health(&ids).await?;
        for (board, h) in open.into_iter().zip(health) {
            let lb = &board.leaderboard_id;
            if h == Health::Ready {
                // A board too big to count gets its rank sketch (best effort).
                if Instant::now() < deadline
                    && let Err(error) = super::sketch::refresh(ctx, board).await
                {
                    warn!(board = %lb, %error, "could not take the board's rank sketch");
                }
                continue;
            }
            if Instant::now() >= deadline {
                done = false;
                break;
            }
            warn!(board = %lb, health = ?h, "rank index not ready; rebuilding");
            let one = rebuild_board(ctx, lb, deadline).await?;
            // Busy: the lease holder finishes it.
            done &= matches!(one.outcome, Outcome::Rebuilt | Outcome::Busy);
            boards.push(one);
        }
        after = page.next;
        if after.is_none() || Instant::now() >= deadline {
            done &= after.is_none();
            return Ok(RebuildReport { done, boards });
        }
    }
}
