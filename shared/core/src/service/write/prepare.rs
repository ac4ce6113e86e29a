//! Stage 1, prepare: the player's row read, a retry answered from its receipt (not yet
//! placed), and what the board does not take now refused.

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{
    AttemptCount, Consistency, ModerationStore, Review, Row, StandingStore, TournamentStore,
};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

use super::reply::IngestReply;
use super::request::SubmitScore;

/// A submission whose row has been read: answered by a receipt (the reply not yet
/// placed), or to be written.
pub(crate) enum Prepared {
    Replay(IngestReply),
    Write(Row),
}

/// Reads the player's row and answers a retry from its receipt; refuses a new result
/// the board does not take now. A row read eventually consistent may be stale: a
/// refusal is then checked against a strongly consistent read first (a retry of a
/// match accepted before the window closed still gets its receipt), and a stale row
/// that misses a receipt only makes the write's condition fail and read again.
pub(super) async fn prepare<S: StandingStore, I>(
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
    if let Some(reply) = replay(ctx, board, req, &result, &row).await? {
        return Ok(Prepared::Replay(reply));
    }
    let Some(refusal) = refusal(board, req, ctx.clock.now()) else {
        return Ok(Prepared::Write(row));
    };
    if consistency == Consistency::Eventual {
        row = ctx
            .store
            .get_row(&req.board, &req.player, Consistency::Strong)
            .await?;
        if let Some(reply) = replay(ctx, board, req, &result, &row).await? {
            return Ok(Prepared::Replay(reply));
        }
    }
    Err(refusal)
}

/// Answers a retry from its receipt, kept in `row` or (while one may be) in a receipt
/// item of its own; `None` if the match is new to the row. `result` is the submission
/// at the board's places and columns ([`SubmitScore::on`]). The reply has no place yet:
/// the driver places it, this reads receipts only.
pub(super) async fn replay<S: StandingStore, I>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    (score, ties): &(Score, Ties),
    row: &Row,
) -> Result<Option<IngestReply>, ServiceError> {
    let receipt = match row.kept_receipt(&req.match_id) {
        Some(r) => Some(r.clone()),
        None if row.may_have_archived(now_ms() / 1000) => {
            (ctx.store)
                .get_receipt(&req.board, &req.player, &req.match_id)
                .await?
        }
        None => None,
    };
    let Some(receipt) = receipt else {
        return Ok(None);
    };
    let digest = req.metadata.as_ref().map(Metadata::digest);
    let same = receipt.submitted == *score
        && receipt.submitted_ties == *ties
        && receipt.metadata_digest == digest
        && receipt.set == req.op.is_set();
    if !same {
        return Err(ServiceError::IdempotencyConflict(req.match_id.clone()));
    }
    if receipt.review == Some(Review::Rejected) {
        return Err(ServiceError::ResultRejected(req.match_id.clone()));
    }
    Ok(Some(IngestReply::new(board, req, &receipt, true)))
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
/// window, the window has closed, the board is being reset, or it is not ACTIVE.
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
    } else if board.reset.as_ref().is_some_and(|r| r.holds(now)) {
        Some(ServiceError::BoardResetting {
            lb: req.board.clone(),
            retry_after_s: leaderboard_rules::reset::RETRY_AFTER_S,
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

/// A tournament result's attempt whose count moved: the membership read again, as the
/// next write's count, or why it can count no more (no member, no attempts left; the
/// inner error, which stands only if the match turns out not to have been written by a
/// copy of this request meanwhile).
pub(super) async fn recount<'a, S: TournamentStore, I>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    attempt: Option<AttemptCount<'a>>,
) -> Result<Result<AttemptCount<'a>, ServiceError>, ServiceError> {
    let Some(a) = attempt else {
        return Err(ServiceError::Contention);
    };
    let member = ctx
        .store
        .get_member(a.occurrence, player, Consistency::Strong)
        .await?;
    Ok(next_count(a, player, member))
}

/// The count the next write of `a` starts from, given the membership as read now.
fn next_count<'a>(
    a: AttemptCount<'a>,
    player: &PlayerId,
    member: Option<leaderboard_rules::tournament::Member>,
) -> Result<AttemptCount<'a>, ServiceError> {
    let tournament = a.tournament.to_owned();
    match (member, a.max) {
        (Some(m), Some(max)) if m.attempts >= max => Err(ServiceError::AttemptsExhausted {
            tournament,
            player: player.clone(),
            max,
        }),
        (Some(m), _) => Ok(AttemptCount {
            seen: m.attempts,
            ..a
        }),
        (None, _) => Err(ServiceError::NotJoined {
            tournament,
            player: player.clone(),
        }),
    }
}
