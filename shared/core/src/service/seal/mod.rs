//! Period end: a closed window's results sealed once. When a window board has passed
//! its end plus grace (plus [`SealSettings::settle`], for the rank index of DynamoDB to
//! catch up), one run (holding a lease, see [`SealState`]) walks the board in rank order
//! from DynamoDB, writes every participant's final rank and score into their history,
//! stores the top [`RESULTS_TOP`] as the board's results, publishes
//! `leaderboard.window.closed` with the top [`EVENT_TOP`] (a tournament cohort's every
//! member), and marks the board sealed. A league's cohort settles its members first
//! (`settle`: tiers and rewards, `league.settled`). Each sweep first publishes the start
//! of every tournament occurrence that opened since (`tournaments::announce`).
//!
//! Runs on a schedule ([`sweep`]) and on demand ([`seal`]). Every run records at least
//! one page; a run out of time saves its place and lets the lease go, a crashed one
//! leaves its place behind its lease; the next run goes on from there. Two runs at
//! once: one holds the lease, the other passes. The event is published after the walk
//! with the lease just renewed, then recorded: a second publication needs a run to lose
//! its lease between the two (a crash there, or a stall longer than [`LEASE`]); the
//! event's `seal_id` (the board) lets a consumer drop it.

pub use crate::service::once::LEASE;

mod read;
mod record;
pub mod reset;
mod rewards;
mod settle;
mod turns;
mod walk;

use leaderboard_rules::page::Paging;
use std::time::{Duration, Instant};

use serde::Serialize;
use tracing::{instrument, warn};

pub use read::{HistoryReply, HistoryRequest, history, results};
pub(crate) use record::record;
pub use turns::{announce as announce_turns, due as turns_due};
pub use walk::Walk;

use crate::service::ServiceError;
use crate::store::{
    BoardStore, EventPublisher, RankedReads, RebuildStore, RewardStore, SealStore, SealedWindow,
    TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::now_ms;

/// Places kept in a board's results.
pub const RESULTS_TOP: u64 = 1_000;
/// Places carried by the window-closed event.
pub const EVENT_TOP: usize = 100;
/// Participants recorded per step (one progress write per step).
pub const PAGE: usize = 1_000;
/// Boards listed per page by the sweep.
const LIST_PAGE: u32 = 100;

/// Tunables of sealing.
#[derive(Debug, Clone, Copy)]
pub struct SealSettings {
    /// How long after a window closes it is sealed: DynamoDB's rank index is eventually
    /// consistent, and the last accepted writes must have reached it.
    pub settle: Duration,
}

impl Default for SealSettings {
    fn default() -> Self {
        Self {
            settle: Duration::from_secs(60),
        }
    }
}

/// What sealing one board did in this run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoardSeal {
    pub leaderboard_id: LeaderboardId,
    pub outcome: SealOutcome,
    /// Participants recorded so far.
    pub recorded: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SealOutcome {
    /// Sealed and published by this run.
    Sealed,
    /// Sealed before (by another run).
    AlreadySealed,
    /// Another run holds the lease.
    Busy,
    /// Out of time; the next run goes on from here.
    InProgress,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SealReport {
    pub boards: Vec<BoardSeal>,
    /// False when time ran out before every due board was visited.
    pub done: bool,
}

/// Whether `board` is a window that closed at least `settle` ago and is not sealed.
pub fn due(board: &Board, settle: Duration, now: i64) -> bool {
    board.sealed_at.is_none()
        && SealedWindow::of(board).is_some()
        && board
            .closes_at()
            .is_some_and(|at| now >= at + settle.as_millis() as i64)
}

/// Seals every due board, as far as the deadline allows.
#[instrument(skip_all)]
pub async fn sweep<
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore + RewardStore,
    E: EventPublisher,
>(
    store: &S,
    events: &E,
    settings: SealSettings,
    deadline: Instant,
) -> Result<SealReport, ServiceError> {
    // Occurrences that opened since the last sweep announce their start first; a failure
    // there (the next sweep tries again) holds no window's seal back.
    if let Err(error) = crate::service::tournaments::announce(store, events, now_ms()).await {
        warn!(%error, "could not announce the tournaments that started; the next sweep will");
    }
    // So do the windows that opened or are about to close.
    if let Err(error) = turns::announce(store, events, now_ms()).await {
        warn!(%error, "could not announce the windows' turns; the next sweep will");
    }
    let mut boards = Vec::new();
    let mut after: Option<String> = None;
    let mut lag = Lag::default();
    loop {
        let page = store
            .list_boards("", Paging::new(after.as_deref(), LIST_PAGE))
            .await?;
        for board in page.boards {
            let now = now_ms();
            if !due(&board, settings.settle, now) {
                continue;
            }
            lag.saw(board.closes_at(), settings.settle, now);
            // Every run takes at least one board a step further.
            if !boards.is_empty() && Instant::now() >= deadline {
                return Ok(lag.report(boards, false));
            }
            let sealed = seal_board(store, events, &board, deadline).await?;
            let stopped = sealed.outcome == SealOutcome::InProgress;
            boards.push(sealed);
            if stopped {
                return Ok(lag.report(boards, false));
            }
        }
        after = page.next;
        if after.is_none() {
            return Ok(lag.report(boards, true));
        }
    }
}

/// How far past its settle time the most overdue window a sweep found was (0 when none
/// was due): the `SealLagSeconds` gauge, whose alarm fires when windows stay unsealed
/// run after run (docs/runbook.md). A window the schedule seals on time shows at most
/// the schedule's period here.
/// With it, `SealsDue`: how many windows were due for their seal when the run found
/// them (the console's overview; the run then seals them).
#[derive(Default)]
struct Lag {
    most_ms: i64,
    due: u64,
}

impl Lag {
    /// A due window that closed at `closed`.
    fn saw(&mut self, closed: Option<i64>, settle: Duration, now: i64) {
        self.due += 1;
        if let Some(closed) = closed {
            let past = now - closed - settle.as_millis() as i64;
            self.most_ms = self.most_ms.max(past);
        }
    }

    fn report(&self, boards: Vec<BoardSeal>, done: bool) -> SealReport {
        crate::service::metrics::gauge("SealLagSeconds", self.most_ms as f64 / 1000.0);
        crate::service::metrics::gauge("SealsDue", self.due as f64);
        SealReport { boards, done }
    }
}

/// Seals one board on demand: refused unless it is due.
#[instrument(skip(store, events, settings))]
pub async fn seal<
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore + RewardStore,
    E: EventPublisher,
>(
    store: &S,
    events: &E,
    settings: SealSettings,
    lb: &LeaderboardId,
    deadline: Instant,
) -> Result<SealReport, ServiceError> {
    let board = store
        .get_board(lb)
        .await?
        .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
    let why = if SealedWindow::of(&board).is_none() {
        Some("only the boards of a family's time windows are sealed")
    } else if board.sealed_at.is_none() && !due(&board, settings.settle, now_ms()) {
        Some("its window has not closed (end plus grace plus the settle time)")
    } else {
        None
    };
    if let Some(why) = why {
        return Err(ServiceError::NotSealable {
            lb: lb.clone(),
            why,
        });
    }
    let sealed = seal_board(store, events, &board, deadline).await?;
    let done = sealed.outcome != SealOutcome::InProgress;
    Ok(SealReport {
        boards: vec![sealed],
        done,
    })
}

/// Seals a closed window: its standings recorded and published under the window's own
/// id (`record`), then the board marked sealed, so that later sweeps pass it by.
#[instrument(skip_all, fields(board = %board.leaderboard_id))]
async fn seal_board<
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore + RewardStore,
    E: EventPublisher,
>(
    store: &S,
    events: &E,
    board: &Board,
    deadline: Instant,
) -> Result<BoardSeal, ServiceError> {
    let lb = &board.leaderboard_id;
    let Some(window) = SealedWindow::of(board) else {
        return Err(ServiceError::NotSealed(lb.clone()));
    };
    let sealed = record::record(store, events, board, window, deadline).await?;
    if matches!(
        sealed.outcome,
        SealOutcome::Sealed | SealOutcome::AlreadySealed
    ) && let Some(results) = store.get_results(lb).await?
    {
        store.mark_sealed(board, results.sealed_at).await?;
    }
    Ok(sealed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lag_is_the_most_overdue_window_past_its_settle_time() {
        let settle = Duration::from_secs(60);
        let mut lag = Lag::default();
        assert_eq!(lag.most_ms, 0, "nothing due: no lag");
        lag.saw(Some(1_000), settle, 61_000);
        assert_eq!(lag.most_ms, 0, "due this instant");
        lag.saw(Some(1_000), settle, 361_000);
        lag.saw(Some(200_000), settle, 361_000);
        lag.saw(None, settle, 361_000);
        assert_eq!(lag.most_ms, 300_000, "the oldest window's five minutes");
        assert_eq!(lag.due, 4, "every due window counted");
    }
}
