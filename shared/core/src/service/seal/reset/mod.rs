//! A board reset now (docs/operations.md, "Resetting a board"): the standings of that
//! moment sealed as a window of their own, then taken off, and the board empty under the
//! same id.
//!
//! An operator asks with a reason ([`start`]): the reset is stored in the board's
//! definition (on the condition that no other is, so two asked at once make one, and the
//! second asker is answered the first), audited, and handed to a run through the jobs'
//! queue for when its fence has settled. From the fence ([`BoardReset::fence_at`], one
//! definition-cache lifetime after the request) until the reset is done, the write path
//! refuses results with 503 `board_resetting` (a receipt still answers a retry). A run
//! ([`run`]), once the fence plus [`ResetSettings::settle`] has passed (the rank order in
//! DynamoDB caught up with the last results):
//!
//! 1. seals the standings as the window `reset-{n}` of the archive `{board}.reset-{n}`,
//!    exactly as a closed window is sealed (`record`: every participant's history, the
//!    top as the archive's results, `leaderboard.window.closed` published once);
//! 2. takes every standing off the board: each row becomes a tombstone at its next
//!    version, keeping its receipts (as an operator's removal does), and the stream takes
//!    each player out of the index and out of live views;
//! 3. marks the reset done, on the condition that it still runs: results are taken again,
//!    each starting its player over on the empty board.
//!
//! A run out of time hands the reset on; a crashed one leaves the seal's place behind its
//! lease, and the taking off starts again from the top of what is left. So a result is
//! decided before the fence and archived, or after the reset and on the new board.

mod run;

use std::time::Duration;

use serde::Serialize;
use tracing::{info, instrument, warn};

pub use run::{run, sweep};

use super::LIST_PAGE;
use crate::service::ServiceError;
use crate::service::boards::ResetView;
use crate::service::operator::{Operator, Reason, record};
use crate::store::{
    AuditAction, BoardStore, JobQueue, JobTurn, ModerationStore, ResetTurn, SealedWindow,
};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::page::Paging;
use leaderboard_rules::reset::BoardReset;
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::window::Period;

/// Tunables of resets.
#[derive(Debug, Clone, Copy)]
pub struct ResetSettings {
    /// From the request to the fence: at least how long a container trusts a cached
    /// board definition, so none still writes as if there were no reset after it.
    pub fence_delay: Duration,
    /// From the fence to the walk: the seal's settle time (the rank order in DynamoDB
    /// catching up with the last results before the fence).
    pub settle: Duration,
    /// How long Redis keeps a closed window's keys (the tombstones' index entries say
    /// when a window board's keys expire).
    pub redis_retention: Duration,
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResetOutcome {
    /// The board is empty and takes results again.
    Done,
    /// Out of time (or before its fence settled): handed on to a later run.
    HandedOn,
    /// Done before, another run holds its seal, or not this board's running reset.
    Passed,
}

/// Why `board` cannot be reset at `now`, if it cannot.
fn refusal(board: &Board, now: i64) -> Option<&'static str> {
    if board.tournament.is_some() {
        Some("a tournament's boards end with their occurrence and its seal")
    } else if board.sealed_at.is_some() || board.effective_status(now) == BoardStatus::Closed {
        Some("it is closed; a closed window's seal keeps its standings")
    } else {
        None
    }
}

/// Where the archived period of a board's first reset begins: its window's start, or
/// its creation.
fn first_since(board: &Board) -> i64 {
    (board.window.as_ref())
        .and_then(|w| w.window.start)
        .unwrap_or(board.created_at)
}

/// The window the reset archives: the board's family, scope and period (a standalone
/// board's own id as its scope, with no family), keyed `reset-{n}` and spanning
/// `[since, fence)`.
pub fn archive_window(board: &Board, reset: &BoardReset) -> SealedWindow {
    let lb = &board.leaderboard_id;
    let (game, mode, scope, period) = match &board.window {
        Some(w) => (
            w.game.clone(),
            w.mode.clone(),
            w.scope.clone(),
            w.window.period,
        ),
        None => (
            String::new(),
            String::new(),
            lb.to_string(),
            Period::AllTime,
        ),
    };
    SealedWindow {
        leaderboard_id: reset.archive_of(lb),
        game,
        mode,
        scope,
        period,
        window: reset.window_key(),
        start: reset.since,
        end: reset.fence_at,
        scores: board.scores,
    }
}

/// Asks for a reset of `lb` now: stored (or, while one runs, that one answered),
/// audited, and handed to a run for when its fence has settled.
#[instrument(skip(store, queue, settings, op, reason))]
pub async fn start<S: BoardStore + ModerationStore, Q: JobQueue>(
    (store, queue): (&S, &Q),
    settings: ResetSettings,
    op: &Operator,
    lb: &LeaderboardId,
    reason: Reason,
) -> Result<ResetView, ServiceError> {
    // A reset stored between the read and the write is the one answered (twice at most:
    // the second read finds it running).
    for _ in 0..2 {
        let board =
            (store.get_board(lb).await?).ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
        if let Some(running) = board.reset.as_ref().filter(|r| r.running()) {
            return Ok(ResetView::of(lb, running));
        }
        let now = now_ms();
        if let Some(why) = refusal(&board, now) {
            return Err(ServiceError::NotResettable {
                lb: lb.clone(),
                why,
            });
        }
        let mut audit = record(op, AuditAction::Reset, &reason);
        audit.leaderboard_id = Some(lb.clone());
        let reset = BoardReset::after(
            board.reset.as_ref(),
            first_since(&board),
            audit.at,
            settings.fence_delay.as_millis() as i64,
            op.0.clone(),
            reason.as_str().to_owned(),
        );
        if !store.set_reset(lb, &reset).await? {
            continue;
        }
        audit.detail = serde_json::json!({
            "reset": reset.n,
            "fence_at": rfc3339_ms(reset.fence_at),
            "archive_id": reset.archive_of(lb),
        });
        store.append_audit(&audit).await?;
        hand_on(queue, lb, &reset, settings).await;
        info!(n = reset.n, "board reset asked for");
        return Ok(ResetView::of(lb, &reset));
    }
    Err(ServiceError::Contention)
}

/// `POST /families/{game}/{mode}/reset`: every board of the family that can be reset
/// now (its open windows, whatever their period and scope), each as [`start`] does it.
#[derive(Debug, Serialize)]
pub struct FamilyReset {
    pub game: String,
    pub mode: String,
    pub resets: Vec<ResetView>,
}

/// Resets every open board of the family `game`/`mode`; 404 `family_not_found` if
/// there is none.
pub async fn start_family<S: BoardStore + ModerationStore, Q: JobQueue>(
    (store, queue): (&S, &Q),
    settings: ResetSettings,
    op: &Operator,
    (game, mode): (&str, &str),
    reason: Reason,
) -> Result<FamilyReset, ServiceError> {
    let not_found = || ServiceError::FamilyNotFound {
        game: game.to_owned(),
        mode: mode.to_owned(),
    };
    store.get_family(game, mode).await?.ok_or_else(not_found)?;
    let prefix = format!("{game}#{mode}#");
    let (mut resets, mut after) = (Vec::new(), None::<String>);
    loop {
        let page = store
            .list_boards(&prefix, Paging::new(after.as_deref(), LIST_PAGE))
            .await?;
        let now = now_ms();
        for board in page.boards.iter().filter(|b| refusal(b, now).is_none()) {
            let lb = &board.leaderboard_id;
            let view = start((store, queue), settings, op, lb, reason.clone()).await?;
            resets.push(view);
        }
        after = page.next;
        if after.is_none() {
            break;
        }
    }
    Ok(FamilyReset {
        game: game.to_owned(),
        mode: mode.to_owned(),
        resets,
    })
}

/// Sends the reset's next turn, for when its walk may begin. Best effort: a turn that
/// cannot be sent is taken up by the seal's sweep, which runs every running reset.
async fn hand_on<Q: JobQueue>(
    queue: &Q,
    lb: &LeaderboardId,
    reset: &BoardReset,
    settings: ResetSettings,
) {
    let turn = JobTurn::Reset(ResetTurn {
        leaderboard_id: lb.clone(),
        reset: reset.n,
    });
    let wait = walk_at(reset, settings) - now_ms();
    let delay = Duration::from_millis(wait.max(0) as u64);
    if let Err(error) = queue.hand_on(&turn, delay).await {
        warn!(%error, "could not hand the reset on; the seal's sweep will take it");
    }
}

/// When a reset's walk may begin: its fence plus the settle time.
fn walk_at(reset: &BoardReset, settings: ResetSettings) -> i64 {
    reset.fence_at + settings.settle.as_millis() as i64
}

/// Whether `board` has a reset whose walk may begin at `now` (the seal's sweep runs it).
pub fn due(board: &Board, settings: ResetSettings, now: i64) -> bool {
    (board.reset.as_ref()).is_some_and(|r| r.running() && now >= walk_at(r, settings))
}
