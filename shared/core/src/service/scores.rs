//! One match result to every window of its family (`POST /scores`), and to the
//! tournaments of its game and mode the player is in.
//!
//! The result counts in two scopes, `GLOBAL` and its region, for each period the family
//! declares: up to 2 x 5 boards, created by their first write. Each board is written
//! with the same idempotent protocol as the single-board route, keyed by
//! `(board, player, match_id)`, so a retried request replays every board's receipt and
//! answers the same list. A window that is closed (or a season the result falls
//! outside of) is refused for that board alone, with its reason; the others still apply.
//! Any backend failure fails the request with a 503: retrying it is always safe.

use futures::future::try_join_all;
use serde::Serialize;
use tracing::instrument;

use super::boards::{family_board, init_index};
use super::ingest::{accepted_in, held_in};
use super::write::reply::{HeldNote, IngestReply};
use super::write::request::SubmitScore;
use super::write::{self, Prepared, check_ban, check_event_ts};
use super::{Context, tournaments};
use crate::service::ServiceError;
use crate::store::{
    BoardStore, Consistency, IngestStore, ModerationStore, RankIndex, Row, StandingStore,
    TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::time::rfc3339_ms;
use leaderboard_rules::window::{NoWindow, Period, TimeWindow};

use leaderboard_rules::decimal::Shown;
pub use leaderboard_rules::match_result::{MatchBody, MatchResult};

/// Why one board did not take the result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

/// What happened on one board.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Outcome {
    Accepted {
        score: Shown,
        /// The standing's tie-break values, on a family with columns.
        #[serde(skip_serializing_if = "Option::is_none")]
        subscores: Option<Vec<i64>>,
        previous_score: Option<Shown>,
        update_applied: bool,
        rank: Option<u64>,
        previous_rank: Option<u64>,
        updated_at: String,
        replayed: bool,
        /// Held for review on this board: `status: HELD` and the rule (docs/integrity.md).
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        held: Option<HeldNote>,
    },
    Refused {
        refused: Refusal,
    },
}

/// One board of the fan-out.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BoardOutcome {
    pub scope: String,
    pub period: Period,
    /// `null` when the period has no window for `event_ts` (outside the season).
    pub leaderboard_id: Option<LeaderboardId>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Reply of `POST /scores`.
#[derive(Debug, Serialize)]
pub struct MatchReply {
    pub player_id: PlayerId,
    pub match_id: MatchId,
    pub event_ts: String,
    pub results: Vec<BoardOutcome>,
    /// The result in each tournament of the game and mode the player is in (absent
    /// when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tournaments: Vec<tournaments::TournamentOutcome>,
}

fn accepted(r: IngestReply) -> Outcome {
    Outcome::Accepted {
        score: r.score,
        subscores: r.subscores,
        previous_score: r.previous_score,
        update_applied: r.update_applied,
        rank: r.rank,
        previous_rank: r.previous_rank,
        updated_at: r.updated_at,
        replayed: r.replayed,
        held: r.held,
    }
}

fn refused(err: &ServiceError) -> Outcome {
    Outcome::Refused {
        refused: Refusal {
            code: err.code(),
            message: err.to_string(),
        },
    }
}

/// The board, created (and its index marked complete) if this is its first write.
pub(crate) async fn ensure_board<S: BoardStore, I: RankIndex>(
    ctx: &Context<S, I>,
    fresh: Board,
) -> Result<Board, ServiceError> {
    match ctx.boards.current(&ctx.store, &fresh.leaderboard_id).await {
        Err(ServiceError::BoardNotFound(_)) => {}
        other => return other,
    }
    let board = match ctx.store.create_board(&fresh).await? {
        Some(existing) => existing,
        None => {
            let expire_at = ctx.settings.index_expire_at(&fresh);
            init_index(&ctx.index, &fresh, expire_at).await;
            fresh
        }
    };
    ctx.boards.put(board.clone());
    Ok(board)
}

/// Applies one match result to every window of its family, and to every tournament of
/// its game and mode the player is in (`tournaments::for_match`). A game and mode with
/// tournaments need no family.
#[instrument(skip(ctx), fields(game = %m.game, mode = %m.mode, player = %m.player, match_id = %m.match_id))]
pub async fn submit_match<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    m: MatchResult,
) -> Result<MatchReply, ServiceError> {
    let now = ctx.clock.now();
    check_event_ts(ctx, m.event_ts, now)?;
    let ts = m.event_ts.unwrap_or(now);
    let family = match ctx.families.get(&ctx.store, &m.game, &m.mode).await {
        Ok(family) => Some(family),
        Err(ServiceError::FamilyNotFound { .. }) => None,
        Err(e) => return Err(e),
    };
    let results = match &family {
        Some(family) => to_family(ctx, family, &m, ts, now).await?,
        None => Vec::new(),
    };
    let (events, tournaments) = tournaments::for_match(ctx, &m, ts, now).await?;
    if family.is_none() && !events {
        return Err(ServiceError::FamilyNotFound {
            game: m.game,
            mode: m.mode,
        });
    }
    let reply = MatchReply {
        player_id: m.player,
        match_id: m.match_id,
        event_ts: rfc3339_ms(ts),
        results,
        tournaments,
    };
    // A match counts once however many boards it reached; one held on a board and
    // applied on another (a gain rule judges each board's standing) counts as both.
    let (applied, held, improved) = reply.now();
    if applied {
        accepted_in(Some(&m.game));
        crate::service::metrics::tally("ResultsImproved", u64::from(improved));
    }
    if held {
        held_in(Some(&m.game));
    }
    Ok(reply)
}

impl MatchReply {
    /// What the match did now on its family's boards (a replay did nothing now): whether
    /// a board recorded it, whether a board held it, and whether it moved a standing.
    fn now(&self) -> (bool, bool, bool) {
        let (mut applied, mut held, mut improved) = (false, false, false);
        for r in &self.results {
            if let Outcome::Accepted {
                replayed: false,
                held: h,
                update_applied,
                ..
            } = &r.outcome
            {
                held |= h.is_some();
                applied |= h.is_none();
                improved |= h.is_none() && *update_applied;
            }
        }
        (applied, held, improved)
    }

    /// Whether any board held the result for review (the reply is then a 202).
    pub fn held(&self) -> bool {
        (self.results.iter()).any(|r| matches!(r.outcome, Outcome::Accepted { held: Some(_), .. }))
    }
}

/// The match result on every window of `family`.
async fn to_family<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    family: &Family,
    m: &MatchResult,
    ts: i64,
    now: i64,
) -> Result<Vec<BoardOutcome>, ServiceError> {
    if !family.regions.contains(&m.region) {
        return Err(ServiceError::UnknownRegion {
            game: m.game.clone(),
            mode: m.mode.clone(),
            region: m.region.clone(),
            regions: family.regions.clone(),
        });
    }
    let targets = family
        .scopes(&m.region)
        .into_iter()
        .flat_map(|scope| family.all_periods().into_iter().map(move |p| (scope, p)));
    let shares = try_join_all(
        targets.map(|(scope, period)| prepare_window(ctx, family, m, scope, period, ts, now)),
    )
    .await?;
    // One ban read for the whole match, after every row it writes was read.
    if shares.iter().any(|s| matches!(s, Share::Write { .. })) {
        check_ban(ctx, &m.game, &m.player).await?;
    }
    try_join_all(shares.into_iter().map(|share| write_share(ctx, share))).await
}

/// One window's share of a match result once its row is read.
enum Share {
    /// Refused, or answered by its receipt: nothing to write.
    Done(BoardOutcome),
    /// To write: the window's board, the submission and the row read.
    Write {
        scope: String,
        period: Period,
        board: Box<Board>,
        req: Box<SubmitScore>,
        row: Row,
    },
}

/// What a board's refusal of the result says in the reply, or the error that fails the
/// whole request (a backend failure, a banned player).
fn refused_or_fail(e: ServiceError) -> Result<Outcome, ServiceError> {
    match e {
        ServiceError::Domain(_)
        | ServiceError::BoardNotActive { .. }
        | ServiceError::WindowClosed { .. }
        | ServiceError::EventOutsideWindow(_)
        | ServiceError::IdempotencyConflict(_) => Ok(refused(&e)),
        e => Err(e),
    }
}

/// One window's share of a match result, up to the write: refused (outside the season,
/// a closed window without a board, a result the board refuses), answered by the row's
/// receipt, or to be written. The rows are read eventually consistent (half a read
/// unit): a stale row only makes its write's condition fail and read again.
async fn prepare_window<S: BoardStore + StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    family: &Family,
    m: &MatchResult,
    scope: &str,
    period: Period,
    ts: i64,
    now: i64,
) -> Result<Share, ServiceError> {
    let outcome_of = |leaderboard_id, outcome| BoardOutcome {
        scope: scope.into(),
        period,
        leaderboard_id,
        outcome,
    };
    let window = match family.window_of(period, ts) {
        Ok(w) => w,
        Err(NoWindow::OutsideSeason) => {
            let refused = Refusal {
                code: "outside_season",
                message: "event_ts is outside the configured season".into(),
            };
            return Ok(Share::Done(outcome_of(None, Outcome::Refused { refused })));
        }
        Err(NoWindow::NoFiring) => {
            let refused = Refusal {
                code: "no_window",
                message:
                    "the schedule has no window around event_ts (no firing before or after it)"
                        .into(),
            };
            return Ok(Share::Done(outcome_of(None, Outcome::Refused { refused })));
        }
    };
    let lb = family.board_id(scope, &window);
    let board = match window_board(ctx, family, scope, window, now).await? {
        Ok(board) => board,
        Err(refusal) => return Ok(Share::Done(outcome_of(Some(lb), refusal))),
    };
    let req = submission(m, lb.clone(), ts, now);
    Ok(
        match write::prepare(ctx, &board, &req, Consistency::Eventual).await {
            Ok(Prepared::Replay(reply)) => Share::Done(outcome_of(Some(lb), accepted(reply))),
            Ok(Prepared::Write(row)) => Share::Write {
                scope: scope.into(),
                period,
                board: Box::new(board),
                req: Box::new(req),
                row,
            },
            Err(e) => Share::Done(outcome_of(Some(lb), refused_or_fail(e)?)),
        },
    )
}

/// The match result as one board's submission: at `ts`, reached (for ties) at `now`, the
/// same on every board it goes to.
pub(crate) fn submission(m: &MatchResult, board: LeaderboardId, ts: i64, now: i64) -> SubmitScore {
    SubmitScore {
        board,
        player: m.player.clone(),
        match_id: m.match_id.clone(),
        score: m.score.clone(),
        subscores: m.subscores.clone(),
        op: Default::default(),
        event_ts: Some(ts),
        want_previous_rank: true,
        reached_at: Some(now),
        metadata: m.metadata.clone(),
    }
}

/// Writes one window's share (the ban already read), or passes on what it already is.
async fn write_share<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    share: Share,
) -> Result<BoardOutcome, ServiceError> {
    match share {
        Share::Done(outcome) => Ok(outcome),
        Share::Write {
            scope,
            period,
            board,
            req,
            row,
        } => Ok(BoardOutcome {
            scope,
            period,
            leaderboard_id: Some(req.board.clone()),
            outcome: match write::write(ctx, &board, *req, row, None).await {
                Ok(reply) => accepted(reply),
                Err(e) => refused_or_fail(e)?,
            },
        }),
    }
}

/// The board of a window. An open window's board is created by its first write; a
/// closed window gets no new board, but an existing one may hold the receipt of a
/// retried request, so it is used; without one the result is refused.
async fn window_board<S: BoardStore, I: RankIndex>(
    ctx: &Context<S, I>,
    family: &Family,
    scope: &str,
    window: TimeWindow,
    now: i64,
) -> Result<Result<Board, Outcome>, ServiceError> {
    if !window.is_closed(family.grace_ms, now) {
        let board = ensure_board(ctx, family_board(family, scope, window, now)).await?;
        return Ok(Ok(board));
    }
    let lb = family.board_id(scope, &window);
    match ctx.boards.current(&ctx.store, &lb).await {
        Ok(board) => Ok(Ok(board)),
        Err(ServiceError::BoardNotFound(_)) => {
            let closed_at = rfc3339_ms(window.closes_at(family.grace_ms).unwrap_or(now));
            Ok(Err(refused(&ServiceError::WindowClosed { lb, closed_at })))
        }
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests;
