//! Score submission: exactly-once per `(board, player, match_id)`, then write-through.
//! docs/cost.md has the protocol, with every crash point and why each invariant holds.
//!
//! 1. Read the player's row (strongly consistent): their standing and the receipts of
//!    their latest matches. A match the row (or, while one may, a receipt item of its
//!    own) knows is a retry, answered from its receipt (`replayed`).
//! 2. Refuse what the board does not take now (closed, outside its window, not ACTIVE in
//!    this container's view of it, at most `BOARD_CACHE_TTL_MS` old; see
//!    `StandingStore::commit` for why the status is not in the write's condition), and a
//!    player banned from the board's game (read after the row).
//! 3. Fold the submission with the board's policy and write the row, with the new
//!    receipt in it, in one conditional `PutItem` on the row's revision. The receipt is
//!    written whether or not the standing changes, so a retry returns the same outcome.
//! 4. A row that moved meanwhile is read again, with the ban, and folded again (jittered
//!    backoff).
//! 5. After the write, apply the new standing to Redis (version-checked) and answer with
//!    the player's rank. If Redis fails the write still stands (`rank: null`); the
//!    stream projector applies it later.
//!
//! By idea: `request` (the body and its `op`, validated), `write` (steps 3-4, with a
//! tournament result's attempt), `receipt` (the reply, the receipt and a retry's answer),
//! `placement` (step 5); the refusals of step 2 and the entry points are here.

mod placement;
mod receipt;
mod request;
mod write;

use tracing::instrument;

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{
    Consistency, IngestStore, ModerationStore, RankIndex, Row, StandingStore, TournamentStore,
};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::time::rfc3339_ms;

use placement::replayed;
pub use receipt::{HeldNote, IngestReply};
pub use request::{Correction, Op, ScoreBody, SubmitScore};
pub(crate) use write::{MAX_ATTEMPTS, fold_result, write};

/// Records one submission; see the module docs for the protocol.
#[instrument(skip(ctx), fields(board = %req.board, player = %req.player, match_id = %req.match_id))]
pub async fn submit_score<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    let now = ctx.clock.now();
    check_event_ts(ctx, req.event_ts, now)?;
    let board = ctx.boards.current(&ctx.store, &req.board).await?;
    if let Some(tournament) = &board.tournament {
        return Err(ServiceError::TournamentBoard {
            lb: req.board,
            tournament: tournament.clone(),
        });
    }
    submit_to(ctx, &board, req).await
}

/// Refuses an `event_ts` further in the future than the allowed skew.
pub(crate) fn check_event_ts<S, I>(
    ctx: &Context<S, I>,
    event_ts: Option<i64>,
    now: i64,
) -> Result<(), DomainError> {
    let skew_ms = ctx.settings.max_future_skew.as_millis() as i64;
    match event_ts {
        Some(ts) if ts > now + skew_ms => Err(DomainError::EventInFuture { skew_ms }),
        _ => Ok(()),
    }
}

/// Records one submission on an already loaded board.
async fn submit_to<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    match prepare(ctx, board, &req, Consistency::Strong).await? {
        Prepared::Answered(reply) => Ok(reply),
        Prepared::Write(row) => {
            if let Some(game) = board.game() {
                check_ban(ctx, game, &req.player).await?;
            }
            let reply = write(ctx, board, req, row, None).await?;
            tally(board.game(), &reply);
            Ok(reply)
        }
    }
}

/// Counts a result recorded now (not a retry's replay): `ResultsAccepted`, and
/// `ResultsImproved` when it moved the player's standing (the dashboard's "improving
/// results"); or, held, `ResultsHeld` by game. By `Game` on a board of a game (the
/// console's overview).
fn tally(game: Option<&str>, reply: &IngestReply) {
    if reply.replayed {
        return;
    }
    // A held result is counted as held (`ResultsHeld`, by the hold), not as accepted.
    if reply.held.is_some() {
        return held_in(game);
    }
    accepted_in(game);
    crate::service::metrics::tally("ResultsImproved", u64::from(reply.update_applied));
}

/// Counts one result accepted now: `ResultsAccepted`, and by `Game` when it has one (a
/// match posted to a family counts once, however many of its boards it changed).
pub(crate) fn accepted_in(game: Option<&str>) {
    crate::service::metrics::tally("ResultsAccepted", 1);
    if let Some(game) = game {
        crate::service::metrics::tally_game("ResultsAccepted", game, 1);
    }
}

/// Counts one result held now by `game` (the boards' holds are `ResultsHeld` without a
/// dimension, one per board: [`crate::service::integrity`]).
pub(crate) fn held_in(game: Option<&str>) {
    if let Some(game) = game {
        crate::service::metrics::tally_game("ResultsHeld", game, 1);
    }
}

/// A submission whose row has been read: answered by a receipt, or to be written.
pub(crate) enum Prepared {
    Answered(IngestReply),
    Write(Row),
}

/// Reads the player's row and answers a retry from its receipt; refuses a new result
/// the board does not take now. A row read eventually consistent may be stale: a
/// refusal is then checked against a strongly consistent read first (a retry of a
/// match accepted before the window closed still gets its receipt), and a stale row
/// that misses a receipt only makes the write's condition fail and read again.
pub(crate) async fn prepare<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    consistency: Consistency,
) -> Result<Prepared, ServiceError> {
    let result = req.on(board)?;
    let mut row = ctx
        .store
        .get_row(&req.board, &req.player, consistency)
        .await?;
    if let Some(reply) = replayed(ctx, board, req, &result, &row).await? {
        return Ok(Prepared::Answered(reply));
    }
    let Some(refusal) = refusal(board, req, ctx.clock.now()) else {
        return Ok(Prepared::Write(row));
    };
    if consistency == Consistency::Eventual {
        row = ctx
            .store
            .get_row(&req.board, &req.player, Consistency::Strong)
            .await?;
        if let Some(reply) = replayed(ctx, board, req, &result, &row).await? {
            return Ok(Prepared::Answered(reply));
        }
    }
    Err(refusal)
}

/// Refuses the result of a player banned from `game`. Read strongly consistent, after
/// the rows the write is conditional on: docs/cost.md has why that order, with the ban's
/// fence on every open board, keeps a banned player's result off every board.
pub(crate) async fn check_ban<S: ModerationStore, I>(
    ctx: &Context<S, I>,
    game: &str,
    player: &PlayerId,
) -> Result<(), ServiceError> {
    match ctx.store.get_ban(game, player).await? {
        Some(_) => Err(ServiceError::PlayerBanned {
            game: game.to_owned(),
            player: player.clone(),
        }),
        None => Ok(()),
    }
}

/// Why `board` takes no new result now, if it does not: the event is outside its
/// window, the window has closed, or the board is not ACTIVE.
fn refusal(board: &Board, req: &SubmitScore, now: i64) -> Option<ServiceError> {
    let outside = board
        .window
        .as_ref()
        .zip(req.event_ts)
        .is_some_and(|(w, ts)| !w.window.contains(ts));
    // On a rolling board: a result already out of the window would never count.
    let aged = board
        .rolling()
        .zip(req.event_ts)
        .is_some_and(|(r, ts)| !r.counts(ts, now));
    let outside = outside || aged;
    if outside {
        Some(ServiceError::EventOutsideWindow(req.board.clone()))
    } else if let Some(at) = board.closes_at().filter(|at| now >= *at) {
        Some(ServiceError::WindowClosed {
            lb: req.board.clone(),
            closed_at: rfc3339_ms(at),
        })
    } else if board.status != BoardStatus::Active {
        Some(ServiceError::BoardNotActive {
            lb: req.board.clone(),
            status: board.status,
        })
    } else {
        None
    }
}
