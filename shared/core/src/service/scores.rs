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
//! The boards written are placed together (`fanout`): their write-throughs go to the
//! index in one round trip per slot, for one result or a whole match's (`POST /matches`, [`submit_whole_match`]).

use futures::future::try_join_all;
use tracing::instrument;

use super::boards::{family_board, init_index};
use super::write::request::SubmitScore;
use super::write::{self, Prepared, check_ban};
use super::{Context, tournaments};
use crate::service::ServiceError;
use crate::store::{
    BoardStore, Consistency, IngestStore, ModerationStore, RankIndex, Row, StandingStore,
    TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::rfc3339_ms;
use leaderboard_rules::window::{NoWindow, Period, TimeWindow};

pub(crate) use fanout::{Fanout, Recorded, place_recorded, tally_match};
pub use leaderboard_rules::match_result::{MatchBody, MatchResult};
pub use matches::{PlayerOutcome, WholeMatch, WholeMatchBody, submit_whole_match};
pub use outcome::{BoardOutcome, MatchReply, Outcome, Refusal};
use outcome::{accepted, refused};

mod fanout;
mod matches;
mod outcome;

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
    let at = Fanout::starting(ctx, m.event_ts, true)?;
    let family = family_of(ctx, &m.game, &m.mode).await?;
    let game = m.game.clone();
    let recorded = record_match(ctx, family.as_ref(), m, at).await?;
    let reply = place_recorded(ctx, vec![recorded]).await.remove(0);
    tally_match(&game, &reply);
    Ok(reply)
}

/// The family of a game and mode, `None` when it has none (its tournaments may still
/// take the match).
pub(crate) async fn family_of<S: BoardStore, I>(
    ctx: &Context<S, I>,
    game: &str,
    mode: &str,
) -> Result<Option<Family>, ServiceError> {
    match ctx.families.get(&ctx.store, game, mode).await {
        Ok(family) => Ok(Some(family)),
        Err(ServiceError::FamilyNotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Stages 1-3 of one match result on every window of `family` and in its tournaments;
/// the family boards' places are found by [`place_recorded`].
pub(crate) async fn record_match<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    family: Option<&Family>,
    m: MatchResult,
    at: Fanout,
) -> Result<Recorded, ServiceError> {
    let shares = match family {
        Some(family) => to_family(ctx, family, &m, at).await?,
        None => Vec::new(),
    };
    let (events, tournaments) = tournaments::for_match(ctx, &m, at.ts, at.now).await?;
    if family.is_none() && !events {
        return Err(ServiceError::FamilyNotFound {
            game: m.game,
            mode: m.mode,
        });
    }
    let reply = MatchReply {
        player_id: m.player,
        match_id: m.match_id,
        event_ts: rfc3339_ms(at.ts),
        results: Vec::new(),
        tournaments,
    };
    Ok(Recorded {
        reply,
        boards: shares,
    })
}

/// The match result on every window of `family`, written, its places still to find.
async fn to_family<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    family: &Family,
    m: &MatchResult,
    at: Fanout,
) -> Result<Vec<Written>, ServiceError> {
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
    let shares = try_join_all(targets.map(|(scope, period)| {
        let on = OnWindow {
            scope: scope.to_owned(),
            period,
        };
        prepare_window(ctx, family, m, on, at)
    }))
    .await?;
    // One ban read for the whole match, after every row it writes was read.
    if shares.iter().any(|s| matches!(s, Share::Write { .. })) {
        check_ban(ctx, &m.game, &m.player).await?;
    }
    try_join_all(shares.into_iter().map(|share| write_share(ctx, share))).await
}

/// A window of the family: its scope and period.
struct OnWindow {
    scope: String,
    period: Period,
}

impl OnWindow {
    /// The window's outcome in the reply.
    fn with(self, leaderboard_id: Option<LeaderboardId>, outcome: Outcome) -> BoardOutcome {
        BoardOutcome {
            scope: self.scope,
            period: self.period,
            leaderboard_id,
            outcome,
        }
    }
}

/// One window's share of a match result once its row is read.
enum Share {
    /// Refused, or answered by its receipt: nothing to write.
    Done(BoardOutcome),
    /// To write: the window, its board, the submission and the row read.
    Write {
        on: OnWindow,
        board: Box<Board>,
        req: Box<SubmitScore>,
        row: Row,
    },
}

/// One window's share once written: its outcome, or the write's reply with its place
/// still to find.
enum Written {
    Done(BoardOutcome),
    Unplaced(OnWindow, Box<write::Unplaced>),
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
    on: OnWindow,
    at: Fanout,
) -> Result<Share, ServiceError> {
    let refused = |code, message: &str| Outcome::Refused {
        refused: Refusal {
            code,
            message: message.into(),
        },
    };
    let window = match family.window_of(on.period, at.ts) {
        Ok(w) => w,
        Err(NoWindow::OutsideSeason) => {
            let no = refused(
                "outside_season",
                "event_ts is outside the configured season",
            );
            return Ok(Share::Done(on.with(None, no)));
        }
        Err(NoWindow::NoFiring) => {
            let no = refused(
                "no_window",
                "the schedule has no window around event_ts (no firing before or after it)",
            );
            return Ok(Share::Done(on.with(None, no)));
        }
    };
    let lb = family.board_id(&on.scope, &window);
    let board = match window_board(ctx, family, &on.scope, window, at.now).await? {
        Ok(board) => board,
        Err(refusal) => return Ok(Share::Done(on.with(Some(lb), refusal))),
    };
    let mut req = submission(m, lb.clone(), at.ts, at.now);
    req.want_previous_rank = at.previous_rank;
    Ok(
        match write::prepare(ctx, &board, &req, Consistency::Eventual).await {
            Ok(Prepared::Replay(reply)) => Share::Done(on.with(Some(lb), accepted(reply))),
            Ok(Prepared::Write(row)) => Share::Write {
                on,
                board: Box::new(board),
                req: Box::new(req),
                row,
            },
            Err(e) => Share::Done(on.with(Some(lb), refused_or_fail(e)?)),
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
) -> Result<Written, ServiceError> {
    let (on, board, req, row) = match share {
        Share::Done(outcome) => return Ok(Written::Done(outcome)),
        Share::Write {
            on,
            board,
            req,
            row,
        } => (on, board, req, row),
    };
    let lb = req.board.clone();
    Ok(match write::record(ctx, &board, *req, row, None).await {
        Ok(unplaced) => Written::Unplaced(on, Box::new(unplaced)),
        Err(e) => Written::Done(on.with(Some(lb), refused_or_fail(e)?)),
    })
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
