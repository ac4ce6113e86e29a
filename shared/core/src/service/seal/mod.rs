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
mod settle;
mod turns;
mod walk;

use leaderboard_rules::page::Paging;
use std::time::{Duration, Instant};

use serde::Serialize;
use tracing::{info, instrument, warn};

pub use read::{HistoryReply, HistoryRequest, history, results};
pub use turns::{announce as announce_turns, due as turns_due};
pub use walk::Walk;

use crate::service::ServiceError;
use crate::store::{
    BoardStore, EventPublisher, HistoryRow, Placing, RankedReads, RebuildStore, Results, SealState,
    SealStore, SealedWindow, StoreError, TournamentStore, WindowClosed,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, RankKey};
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
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore,
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
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore,
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

/// One run's hold on a board's seal.
struct Run<'a, S> {
    store: &'a S,
    lb: &'a LeaderboardId,
    state: SealState,
}

impl<S: SealStore> Run<'_, S> {
    /// Saves the progress and renews the lease; false if another run took it over.
    async fn save(&mut self) -> Result<bool, StoreError> {
        self.state.lease_until = now_ms() + LEASE.as_millis() as i64;
        self.store.save_seal(self.lb, &self.state).await
    }

    fn report(&self, outcome: SealOutcome) -> BoardSeal {
        BoardSeal {
            leaderboard_id: self.lb.clone(),
            outcome,
            recorded: self.state.recorded,
        }
    }
}

/// Claims the board's seal and takes it as far as the deadline allows.
#[instrument(skip_all, fields(board = %board.leaderboard_id))]
#[expect(
    clippy::too_many_lines,
    reason = "a board's seal in its order: claim, read, write results and history, publish, settle"
)]
async fn seal_board<
    S: RankedReads + RebuildStore + SealStore + TournamentStore,
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
    let now = now_ms();
    let owner = super::run_id();
    let claimed = store
        .claim_seal(lb, &owner, now, now + LEASE.as_millis() as i64)
        .await?;
    let Some(state) = claimed else {
        return finished_elsewhere(store, board).await;
    };
    let mut run = Run { store, lb, state };
    if !run.state.walked {
        let dir = board.policy.direction();
        let after = run
            .state
            .after
            .as_deref()
            .and_then(|k| RankKey::from_sort_key(dir, k));
        let mut walk = Walk::new(store, lb, dir, board.rank_index, after);
        loop {
            let page = walk.next(PAGE).await?;
            let rows: Vec<HistoryRow> = page
                .iter()
                .zip(run.state.recorded + 1..)
                .filter_map(|(key, rank)| {
                    Some(HistoryRow {
                        player_id: leaderboard_rules::ids::PlayerId::parse(&key.player).ok()?,
                        window: window.clone(),
                        rank,
                        score: key.score.get(),
                        ties: key.ties.clone(),
                        reached_at: key.reached_at,
                        league: None,
                    })
                })
                .collect();
            store.put_history(&rows).await?;
            run.state.recorded += page.len() as u64;
            run.state.after = page.last().map(|k| k.sort_key(dir));
            let end = page.len() < PAGE;
            if end {
                let top = match board.rank_index {
                    true => {
                        store
                            .ranked_after(BoardOrder::new(lb, dir), None, RESULTS_TOP)
                            .await?
                    }
                    false => {
                        let mut walk = Walk::new(store, lb, dir, false, None);
                        walk.next(RESULTS_TOP as usize).await?
                    }
                };
                let results = Results {
                    window: window.clone(),
                    sealed_at: now_ms(),
                    total: run.state.recorded,
                    top: placings(&top),
                    league: None,
                };
                store.put_results(&results).await?;
                run.state.walked = true;
                // The last key names a player; nothing needs it any more.
                run.state.after = None;
            }
            if !end && Instant::now() >= deadline {
                // Out of time: the place is saved and the lease let go, so the next run
                // goes on at once.
                run.state.lease_until = 0;
                let kept = run.store.save_seal(lb, &run.state).await?;
                let outcome = if kept {
                    SealOutcome::InProgress
                } else {
                    SealOutcome::Busy
                };
                return Ok(run.report(outcome));
            }
            if !run.save().await? {
                return Ok(run.report(SealOutcome::Busy));
            }
            if end {
                break;
            }
        }
    }
    // A league's cohort settles its members before its window-closed event.
    if !settle::settle(&mut run, events, board, &window).await? {
        return Ok(run.report(SealOutcome::Busy));
    }
    let results = store
        .get_results(lb)
        .await?
        .ok_or_else(|| ServiceError::NotSealed(lb.clone()))?;
    // Renewed just before publishing: a run that lost its lease stops here.
    if !run.save().await? {
        return Ok(run.report(SealOutcome::Busy));
    }
    events
        .window_closed(&WindowClosed {
            seal_id: lb.to_string(),
            window,
            sealed_at: results.sealed_at,
            total: results.total,
            // A tournament's cohort names every member's final rank (at most 1,000).
            top: (results.top.iter())
                .take(if board.is_cohort() {
                    usize::MAX
                } else {
                    EVENT_TOP
                })
                .cloned()
                .collect(),
        })
        .await?;
    run.state.published = true;
    if !run.save().await? {
        warn!("lost the seal's lease right after publishing");
    }
    store.mark_sealed(board, results.sealed_at).await?;
    info!(
        total = results.total,
        ms = now_ms() - run.state.started_at,
        "window sealed"
    );
    Ok(run.report(SealOutcome::Sealed))
}

/// The claim failed: the seal is done (make sure the board says so) or held by another run.
async fn finished_elsewhere<S: SealStore>(
    store: &S,
    board: &Board,
) -> Result<BoardSeal, ServiceError> {
    let lb = &board.leaderboard_id;
    let state = store.get_seal(lb).await?;
    let recorded = state.as_ref().map_or(0, |s| s.recorded);
    let outcome = match state {
        Some(s) if s.published => {
            if let Some(results) = store.get_results(lb).await? {
                store.mark_sealed(board, results.sealed_at).await?;
            }
            SealOutcome::AlreadySealed
        }
        _ => SealOutcome::Busy,
    };
    Ok(BoardSeal {
        leaderboard_id: lb.clone(),
        outcome,
        recorded,
    })
}

/// Ranked keys as places 1, 2, ...
fn placings(keys: &[RankKey]) -> Vec<Placing> {
    keys.iter()
        .zip(1..)
        .map(|(k, rank)| Placing {
            rank,
            player_id: leaderboard_rules::ids::PlayerId::parse(&k.player).ok(),
            score: k.score.get(),
            ties: k.ties.clone(),
            reached_at: k.reached_at,
        })
        .collect()
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
