//! Standalone boards: create, read, change status.

use leaderboard_rules::reset::BoardReset;
use serde::{Deserialize, Serialize};
use tracing::{instrument, warn};

use super::Created;
use crate::service::ServiceError;

use crate::service::operator::{self, Operator};
use crate::store::{BoardStore, ModerationStore, RankIndex};
use leaderboard_rules::board::{Board, BoardStatus, Policy, dense_unless_asked};
use leaderboard_rules::decimal::{ScoreFormat, Style};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::integrity::{Integrity, IntegrityBody};
use leaderboard_rules::reward::RewardTable;
use leaderboard_rules::tiebreak::Columns;
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::window::Period;

/// Body of `POST /leaderboards`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateBoard {
    pub leaderboard_id: LeaderboardId,
    #[serde(default)]
    pub policy: Policy,
    /// Whether the index keeps the board's distinct scores for `rank_mode=dense`
    /// (default false). Without them every apply and rebuild does less work.
    #[serde(default = "dense_unless_asked")]
    pub dense_ranks: bool,
    /// Whether DynamoDB keeps the board in rank order too (default true; see
    /// [`Board::rank_index`]).
    #[serde(default = "ranked_unless_asked")]
    pub rank_index: bool,
    /// Decimal places of its scores, 0 to 6 (default 0: integers; docs/decimals.md).
    pub decimals: Option<i64>,
    /// How replies write a decimal board's scores: `NUMBER` (default) or `STRING`.
    pub score_format: Option<Style>,
    /// Tie-break columns after the score, each `ASC` or `DESC` (at most 3;
    /// docs/tiebreaks.md).
    pub tiebreaks: Option<serde_json::Value>,
    /// The rules that hold a suspicious result for review (docs/integrity.md).
    pub integrity: Option<serde_json::Value>,
    /// What its places earn when a reset seals them (docs/rewards.md).
    pub rewards: Option<serde_json::Value>,
}

fn ranked_unless_asked() -> bool {
    true
}

impl CreateBoard {
    /// The board a body naming only its id and policy creates: the API's defaults for
    /// everything else.
    #[must_use]
    pub fn new(leaderboard_id: LeaderboardId, policy: Policy) -> Self {
        Self {
            leaderboard_id,
            policy,
            dense_ranks: dense_unless_asked(),
            rank_index: ranked_unless_asked(),
            decimals: None,
            score_format: None,
            tiebreaks: None,
            integrity: None,
            rewards: None,
        }
    }
}

/// A board as the API shows it. `status` is the effective one (a window past its end
/// plus grace shows CLOSED).
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct BoardView {
    pub leaderboard_id: LeaderboardId,
    pub policy: Policy,
    pub status: BoardStatus,
    pub created_at: String,
    pub dense_ranks: bool,
    pub rank_index: bool,
    pub decimals: u8,
    pub score_format: Style,
    #[serde(skip_serializing_if = "Columns::is_empty")]
    pub tiebreaks: Columns,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    /// When late results stop being accepted (end plus grace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
    /// When the window's results were sealed (`GET /leaderboards/{lb}/results`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sealed_at: Option<String>,
    /// A rolling schedule's board: how far back its results count (docs/schedules.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rolling_seconds: Option<i64>,
    /// Its integrity rules, as the body that set them writes them (docs/integrity.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<serde_json::Value>,
    /// Its latest reset (docs/operations.md): running (`RESETTING`) or `DONE`, and the
    /// archive that keeps the standings it took off.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reset: Option<ResetView>,
    /// Its reward table (docs/rewards.md): a family's board shows its family's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewards: Option<RewardTable>,
}

impl BoardView {
    pub fn at(b: Board, now: i64) -> Self {
        let status = b.effective_status(now);
        let closes_at = b.closes_at().map(rfc3339_ms);
        let integrity = b.integrity.as_ref().map(|i| i.view(b.scores));
        let reset = (b.reset.as_ref()).map(|r| ResetView::of(&b.leaderboard_id, r));
        let w = b.window;
        Self {
            leaderboard_id: b.leaderboard_id,
            policy: b.policy,
            status,
            created_at: rfc3339_ms(b.created_at),
            dense_ranks: b.dense_ranks,
            rank_index: b.rank_index,
            decimals: b.scores.decimals.get(),
            score_format: b.scores.style,
            tiebreaks: b.scores.tiebreaks,
            game: w.as_ref().map(|w| w.game.clone()),
            mode: w.as_ref().map(|w| w.mode.clone()),
            scope: w.as_ref().map(|w| w.scope.clone()),
            period: w.as_ref().map(|w| w.window.period),
            window: w.as_ref().and_then(|w| w.window.key.clone()),
            starts_at: w.as_ref().and_then(|w| w.window.start).map(rfc3339_ms),
            ends_at: w.as_ref().and_then(|w| w.window.end).map(rfc3339_ms),
            closes_at,
            sealed_at: b.sealed_at.map(rfc3339_ms),
            rolling_seconds: w.as_ref().and_then(|w| w.rolling_ms).map(|ms| ms / 1000),
            integrity,
            reset,
            rewards: b.rewards,
        }
    }
}

/// A reset as replies show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResetView {
    pub leaderboard_id: LeaderboardId,
    pub reset: u32,
    /// `RESETTING` until the board is empty and takes results again, then `DONE`.
    pub status: &'static str,
    pub requested_by: String,
    pub requested_at: String,
    pub reason: String,
    /// From here until `DONE` the board refuses results (503 `board_resetting`).
    pub fence_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done_at: Option<String>,
    /// Where the standings it took off are sealed: `GET /leaderboards/{archive}/results`.
    pub archive_id: LeaderboardId,
    /// The archived window, `[since, fence_at)`.
    pub since: String,
}

impl ResetView {
    pub fn of(lb: &LeaderboardId, r: &BoardReset) -> Self {
        Self {
            leaderboard_id: lb.clone(),
            reset: r.n,
            status: if r.running() { "RESETTING" } else { "DONE" },
            requested_by: r.actor.clone(),
            requested_at: rfc3339_ms(r.requested_at),
            reason: r.reason.clone(),
            fence_at: rfc3339_ms(r.fence_at),
            done_at: r.done_at.map(rfc3339_ms),
            archive_id: r.archive_of(lb),
            since: rfc3339_ms(r.since),
        }
    }
}

/// Creates a board. Asking again with the same settings is not an error (the existing
/// board is returned); different settings are a [`ServiceError::BoardConflict`].
/// A new board's index is marked complete (it is empty); if Redis is down then, the
/// rebuild sweep finds the board unmarked and marks it later.
#[instrument(skip(store, index), fields(board = %req.leaderboard_id))]
pub async fn create_board<S: BoardStore, I: RankIndex>(
    store: &S,
    index: &I,
    req: CreateBoard,
) -> Result<Created<BoardView>, ServiceError> {
    if req.leaderboard_id.as_str().starts_with("t:") {
        let why = "ids starting with t: are tournaments' boards (docs/tournaments.md)";
        return Err(leaderboard_rules::error::DomainError::invalid("leaderboard_id", why).into());
    }
    leaderboard_rules::reset::check_not_archive(&req.leaderboard_id)?;
    let scores = ScoreFormat::asked(req.decimals, req.score_format, req.tiebreaks.as_ref())?;
    let integrity = asked_integrity(req.integrity, scores)?;
    let rewards = RewardTable::asked(req.rewards)?;
    let now = now_ms();
    let board = Board {
        rewards,
        integrity,
        scores,
        tournament: None,
        leaderboard_id: req.leaderboard_id,
        policy: req.policy,
        status: BoardStatus::Active,
        created_at: now,
        window: None,
        sealed_at: None,
        dense_ranks: req.dense_ranks,
        rank_index: req.rank_index,
        reset: None,
    };
    match store.create_board(&board).await? {
        None => {
            init_index(index, &board, None).await;
            Ok(Created::New(BoardView::at(board, now)))
        }
        Some(existing)
            if existing.policy == board.policy
                && existing.dense_ranks == board.dense_ranks
                && existing.rank_index == board.rank_index
                && existing.scores == board.scores
                && existing.integrity == board.integrity
                && existing.rewards == board.rewards
                && existing.window.is_none() =>
        {
            Ok(Created::Existing(BoardView::at(existing, now)))
        }
        Some(existing) => Err(ServiceError::BoardConflict(existing.leaderboard_id)),
    }
}

/// The integrity rules a body asks for (`None`: none, or an empty object).
pub(crate) fn asked_integrity(
    body: Option<serde_json::Value>,
    scores: ScoreFormat,
) -> Result<Option<Integrity>, leaderboard_rules::error::DomainError> {
    let Some(body) = body else {
        return Ok(None);
    };
    let rules = IntegrityBody::read(body)?.validate(scores.decimals)?;
    Ok((!rules.is_empty()).then_some(rules))
}

/// Marks a board this call created as completely indexed (keeping its distinct scores
/// if it has dense ranks); a failure is only logged.
pub async fn init_index<I: RankIndex>(index: &I, board: &Board, expire_at: Option<i64>) {
    let lb = &board.leaderboard_id;
    if let Err(error) = index.init_board(lb, expire_at, board.dense_ranks).await {
        warn!(board = %lb, %error, "could not mark the new board's index; the rebuild sweep will");
    }
}

/// Reads one board (always from the store, never the cache).
/// A family's board shows its family's reward table: the one its window is paid by
/// (as it is now; docs/rewards.md).
pub async fn get_board<S: BoardStore>(
    store: &S,
    lb: &LeaderboardId,
) -> Result<BoardView, ServiceError> {
    let mut board =
        (store.get_board(lb).await?).ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
    if let Some(w) = board.window.as_ref().filter(|_| board.tournament.is_none()) {
        let family = store.get_family(&w.game, &w.mode).await?;
        board.rewards = family.and_then(|f| f.rewards);
    }
    Ok(BoardView::at(board, now_ms()))
}

/// Body of `PATCH /leaderboards/{lb}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatchBoard {
    pub status: BoardStatus,
    /// Why, for the audit trail (optional).
    #[serde(default)]
    pub reason: Option<String>,
}

/// `PATCH /leaderboards/{lb}` by `op`: the status change ([`set_status`]), then its
/// record in the audit trail (with `patch.reason`, or "status change").
pub async fn change_status<S: BoardStore + ModerationStore>(
    store: &S,
    op: &Operator,
    lb: &LeaderboardId,
    patch: PatchBoard,
) -> Result<BoardView, ServiceError> {
    let view = set_status(store, lb, patch.status).await?;
    operator::status_changed(store, op, lb, patch.status, patch.reason).await?;
    Ok(view)
}

/// Changes a board's status: ACTIVE <-> FROZEN, either -> CLOSED, nothing out of CLOSED.
/// Asking for the status the board already has changes nothing and succeeds.
#[instrument(skip(store))]
pub async fn set_status<S: BoardStore>(
    store: &S,
    lb: &LeaderboardId,
    to: BoardStatus,
) -> Result<BoardView, ServiceError> {
    let not_found = || ServiceError::BoardNotFound(lb.clone());
    // A concurrent change makes the conditional write fail; read again and decide again.
    for _ in 0..5 {
        let board = store.get_board(lb).await?.ok_or_else(not_found)?;
        let now = now_ms();
        let from = board.effective_status(now);
        if from == to {
            return Ok(BoardView::at(board, now));
        }
        if !board.can_become(to, now) {
            return Err(ServiceError::InvalidTransition {
                lb: lb.clone(),
                from,
                to,
            });
        }
        if store.set_status(lb, board.status, to).await? {
            let changed = Board {
                status: to,
                ..board
            };
            return Ok(BoardView::at(changed, now));
        }
    }
    Err(ServiceError::Contention)
}
