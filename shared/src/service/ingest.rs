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

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tracing::{instrument, warn};

use super::Context;
use crate::board::{Board, BoardStatus, Fold, Policy, Standing, correct};
use crate::decimal::{Amount, Shown};
use crate::error::DomainError;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankMode};
use crate::profile::Metadata;
use crate::rolling::{Bucket, Rolling, refold};
use crate::score::Score;
use crate::service::ServiceError;
use crate::service::moderation::{Operator, Reason, ReasonBody, record};
use crate::store::Buckets;
use crate::store::IndexError;
use crate::store::{
    AttemptCount, Commit, CommitOutcome, Consistency, Health, IndexEntry, KeptReceipt, RankIndex,
    Receipt, Row, ScoreStore,
};
use crate::store::{AuditAction, AuditRecord};
use crate::tiebreak::{Ties, read_subscores};
use crate::time::{now_ms, rfc3339_ms};

/// Optimistic attempts before giving up with [`ServiceError::Contention`].
const MAX_ATTEMPTS: u32 = 64;

/// Body of `POST /leaderboards/{lb}/players/{p}/score`. Fields are checked one by one in
/// [`SubmitScore::new`] so each error names its field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreBody {
    /// Read as written (a number's literal or a string), so a decimal is exact
    /// (docs/decimals.md).
    pub new_score: Option<Box<RawValue>>,
    pub match_id: Option<serde_json::Value>,
    /// When the match ended (RFC 3339 or ms); defaults to now. On a time-window board it
    /// must fall inside the window.
    pub event_ts: Option<serde_json::Value>,
    /// A JSON object of at most 512 bytes, kept with the standing when this result sets
    /// it and shown on the player's row.
    pub metadata: Option<serde_json::Value>,
    /// One integer per tie-break column of the board (docs/tiebreaks.md).
    pub subscores: Option<serde_json::Value>,
    /// `"set"` (an operator's correction, with `reason`) or `"incr"` (SUM's own);
    /// absent: the board's policy (see [`Op`]).
    pub op: Option<serde_json::Value>,
    /// Why a correction (`op: set`) is made; only with it. Kept in the audit trail.
    pub reason: Option<serde_json::Value>,
}

/// What a result does to the player's standing: the board's policy, or (`op: set`) an
/// operator's correction to exactly its score.
#[derive(Debug, Clone, Default)]
pub enum Op {
    /// The board's policy: `op` absent, or `incr`, which only a SUM board takes (it is
    /// what SUM does; any other board answers 422 `op_not_allowed`).
    #[default]
    Policy,
    Incr,
    /// `op: set`: the standing becomes this result's score (and subscores) whatever the
    /// policy, audited in the same write as the row (`board::correct`).
    Set(Correction),
}

/// Who corrects a standing, and why.
#[derive(Debug, Clone)]
pub struct Correction {
    pub actor: Operator,
    pub reason: Reason,
}

impl Op {
    /// Reads `op` and `reason`: a reason comes only with `op: set`, which needs one.
    fn parse(
        op: Option<&serde_json::Value>,
        reason: Option<serde_json::Value>,
        actor: &Operator,
    ) -> Result<Self, DomainError> {
        let op = match op {
            None => Self::Policy,
            Some(v) if v == "incr" => Self::Incr,
            Some(v) if v == "set" => {
                let reason = Reason::parse(ReasonBody { reason })?;
                return Ok(Self::Set(Correction {
                    actor: actor.clone(),
                    reason,
                }));
            }
            Some(_) => return Err(DomainError::invalid("op", "must be \"set\" or \"incr\"")),
        };
        match reason {
            Some(_) => Err(DomainError::invalid("reason", "only with op set")),
            None => Ok(op),
        }
    }

    /// Whether this is an operator's correction.
    pub fn is_set(&self) -> bool {
        matches!(self, Self::Set(_))
    }
}

/// A validated submission.
#[derive(Debug, Clone)]
pub struct SubmitScore {
    pub board: LeaderboardId,
    pub player: PlayerId,
    pub match_id: MatchId,
    /// The score as written; read at the board's places ([`Amount::scaled`]).
    pub score: Amount,
    /// The tie-break values, as many as the board has columns
    /// ([`crate::tiebreak::Columns::encode`]).
    pub subscores: Vec<Score>,
    /// When the match ended, ms; `None` means now.
    pub event_ts: Option<i64>,
    /// Read the player's rank before the write and keep it in the receipt.
    pub want_previous_rank: bool,
    /// The reached-at to record if the score changes; `None` means the commit time.
    /// A fan-out gives all its boards the request's time, so ties break alike on each.
    pub reached_at: Option<i64>,
    /// The result's metadata, kept with the standing if this result sets it.
    pub metadata: Option<Metadata>,
    /// What the result does to the standing (`op`).
    pub op: Op,
}

impl SubmitScore {
    /// A result of `body` on `board`, sent by `actor` (the caller's IAM principal, which
    /// a correction's audit record names).
    pub fn new(
        board: LeaderboardId,
        player: PlayerId,
        body: ScoreBody,
        actor: &Operator,
    ) -> Result<Self, DomainError> {
        let score = match body.new_score {
            Some(raw) => Amount::read("new_score", &raw)?,
            None => return Err(DomainError::invalid("new_score", "is required")),
        };
        let match_id = match body.match_id {
            Some(serde_json::Value::String(s)) => MatchId::parse(&s)?,
            Some(_) => return Err(DomainError::invalid("match_id", "must be a string")),
            None => return Err(DomainError::invalid("match_id", "is required")),
        };
        let event_ts = body
            .event_ts
            .as_ref()
            .map(|v| crate::time::parse_ts("event_ts", v))
            .transpose()?;
        let metadata = body.metadata.map(Metadata::parse).transpose()?;
        let subscores = read_subscores(body.subscores.as_ref())?;
        let op = Op::parse(body.op.as_ref(), body.reason, actor)?;
        Ok(Self {
            op,
            board,
            player,
            match_id,
            score,
            subscores,
            event_ts,
            want_previous_rank: true,
            reached_at: None,
            metadata,
        })
    }
}

impl SubmitScore {
    /// The result as `board` keeps it: the score at its places and the tie-break values
    /// at its columns.
    pub(crate) fn on(&self, board: &Board) -> Result<(Score, Ties), DomainError> {
        if matches!(self.op, Op::Incr) && board.policy != Policy::Sum {
            return Err(DomainError::OpNotAllowed {
                op: "incr",
                policy: board.policy.as_str(),
            });
        }
        // A correction of a rolling board's standing would age out with the window.
        if self.op.is_set() && rolling_of(board).is_some() {
            return Err(DomainError::OpNotAllowed {
                op: "set",
                policy: "rolling",
            });
        }
        let score = self.score.scaled(board.scores.decimals)?;
        let ties = board.scores.tiebreaks.encode(&self.subscores)?;
        Ok((score, ties))
    }
}

/// The ingest reply (docs/api.md).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IngestReply {
    pub player_id: PlayerId,
    pub leaderboard_id: LeaderboardId,
    /// Written as the board writes scores (docs/decimals.md).
    pub score: Shown,
    /// The standing's tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    pub previous_score: Option<Shown>,
    pub last_match_id: MatchId,
    /// Reached-at of `score`, RFC 3339 with ms: what the board orders ties by.
    pub updated_at: String,
    pub update_applied: bool,
    /// The player's rank now; `null` when the rank index could not be reached.
    pub rank: Option<u64>,
    pub total: Option<u64>,
    /// The rank before this submission (`null` for a player new to the board, or when
    /// the index could not say); kept in the receipt, so a retry answers the same.
    pub previous_rank: Option<u64>,
    pub replayed: bool,
    /// A tournament result's count of attempts as its write left it (from the receipt,
    /// so a retry answers the original's); the tournament's reply shows it.
    #[serde(skip)]
    pub attempts_used: Option<u32>,
}

impl IngestReply {
    fn new(board: &Board, req: &SubmitScore, r: &Receipt, replayed: bool) -> Self {
        let show = |s| board.scores.show(s);
        Self {
            player_id: req.player.clone(),
            leaderboard_id: req.board.clone(),
            score: show(r.score),
            subscores: board.scores.tiebreaks.shown(&r.ties),
            previous_score: r.previous_score.map(show),
            last_match_id: r.last_match_id.clone(),
            updated_at: rfc3339_ms(r.updated_at),
            update_applied: r.update_applied,
            rank: None,
            total: None,
            previous_rank: r.previous_rank,
            replayed,
            attempts_used: r.attempt,
        }
    }
}

/// Records one submission; see the module docs for the protocol.
#[instrument(skip(ctx), fields(board = %req.board, player = %req.player, match_id = %req.match_id))]
pub async fn submit_score<S: ScoreStore, I: RankIndex>(
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
async fn submit_to<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    match prepare(ctx, board, &req, Consistency::Strong).await? {
        Prepared::Answered(reply) => Ok(reply),
        Prepared::Write(row) => {
            if let Some(game) = game_of(board) {
                check_ban(ctx, game, &req.player).await?;
            }
            write(ctx, board, req, row, None).await
        }
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
pub(crate) async fn prepare<S: ScoreStore, I: RankIndex>(
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
        if let Some(reply) = replay(ctx, board, req, &result, &row).await? {
            return Ok(Prepared::Answered(reply));
        }
    }
    Err(refusal)
}

/// The game whose bans apply to `board` (a family board's).
pub(crate) fn game_of(board: &Board) -> Option<&str> {
    board.window.as_ref().map(|w| w.game.as_str())
}

/// Refuses the result of a player banned from `game`. Read strongly consistent, after
/// the rows the write is conditional on: docs/cost.md has why that order, with the ban's
/// fence on every open board, keeps a banned player's result off every board.
pub(crate) async fn check_ban<S: ScoreStore, I>(
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

/// Folds the submission into `row` and writes it, conditional on the row's revision; a
/// row that moved meanwhile is read again (and the ban with it) and folded again. A
/// tournament result's attempt (`counted`) is counted in the same write, or the write
/// refused.
pub(crate) async fn write<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
    mut row: Row,
    mut counted: Option<AttemptCount<'_>>,
) -> Result<IngestReply, ServiceError> {
    let dir = board.policy.direction();
    let result = req.on(board)?;
    let (score, ties) = &result;
    let mut before = place_before(ctx, &req, dir).await;
    let previous_rank = match &before {
        Some(Ok(Placed::At(rank, _))) => Some(*rank),
        _ => None,
    };
    let index_expire_at = ctx.settings.index_expire_at(board);
    for attempt in 0..MAX_ATTEMPTS {
        let current = row.standing.as_ref();
        let now = now_ms();
        let at = req.reached_at.unwrap_or(now);
        let as_of = ctx.clock.now();
        let (folded, buckets) = match fold_result(board, &req, &row, (*score, ties), at, as_of) {
            Ok((fold, buckets)) => (Ok(fold), buckets),
            Err(e) => (Err(e), None),
        };
        let fold = match folded {
            // A player whose standing was removed starts over after the removal.
            Ok(fold) if current.is_none() => fold
                .after_removal(row.version)
                .carrying(req.metadata.clone()),
            Ok(fold) => fold.carrying(req.metadata.clone()),
            // A retry of an accepted match must replay, even if folding it again would
            // now be refused (a SUM total near the limit); the row may have been stale.
            Err(e) => {
                let fresh = (ctx.store)
                    .get_row(&req.board, &req.player, Consistency::Strong)
                    .await?;
                return replay(ctx, board, &req, &result, &fresh)
                    .await?
                    .ok_or_else(|| e.into());
            }
        };
        let (standing, mut receipt) = outcome(&req, &result, current, &fold);
        receipt.previous_rank = previous_rank;
        receipt.attempt = counted.map(|a| a.after());
        let audit = correction_audit(&req, board, &receipt);
        let commit = Commit {
            board: &req.board,
            player: &req.player,
            direction: dir,
            row: &row,
            standing,
            receipt: KeptReceipt {
                match_id: req.match_id.clone(),
                receipt: receipt.clone(),
                expires_at: now / 1000 + ctx.settings.receipt_ttl.as_secs() as i64,
            },
            index_expire_at,
            ranked: board.rank_index,
            now_s: now / 1000,
            attempt: counted,
            audit: audit.as_ref(),
            buckets: rolling_of(board)
                .zip(buckets.as_deref())
                .map(|(r, b)| Buckets {
                    buckets: b,
                    next_expiry: r.next_expiry(b),
                }),
        };
        let outcome = ctx.store.commit(&commit).await?;
        if outcome == CommitOutcome::Committed {
            let mut reply = IngestReply::new(board, &req, &receipt, false);
            let applied = receipt.update_applied.then_some(standing);
            // Unchanged, the player's place is the one just read before the write.
            let known = before.take().filter(|_| applied.is_none());
            place(ctx, &req, dir, applied, index_expire_at, known, &mut reply).await;
            return Ok(reply);
        }
        tokio::time::sleep(super::backoff(attempt)).await;
        // A tournament result's count moved: read again before the row, so that a count
        // that includes a copy of this match comes with that copy's receipt.
        let recounted = match outcome {
            CommitOutcome::AttemptRefused => Some(recount(ctx, &req.player, counted).await?),
            _ => None,
        };
        row = (ctx.store)
            .get_row(&req.board, &req.player, Consistency::Strong)
            .await?;
        if let Some(reply) = replay(ctx, board, &req, &result, &row).await? {
            return Ok(reply);
        }
        if let Some(recounted) = recounted {
            counted = Some(recounted?);
        }
        if let Some(game) = game_of(board) {
            check_ban(ctx, game, &req.player).await?;
        }
    }
    warn!(attempts = MAX_ATTEMPTS, "gave up under write contention");
    Err(ServiceError::Contention)
}

/// A rolling board's window and buckets (docs/schedules.md), if `board` is one.
pub(crate) fn rolling_of(board: &Board) -> Option<Rolling> {
    board.window.as_ref()?.rolling_ms.map(Rolling::of)
}

/// The fold of `result`, reached `at`, into `row`: the board's policy, or an operator's
/// correction; on a rolling board the result joins its time's bucket, the buckets that
/// have left by `as_of` (the context's clock) are dropped, and the standing is what the
/// live ones give (returned with them).
fn fold_result(
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    (score, ties): (Score, &Ties),
    at: i64,
    as_of: i64,
) -> Result<(Fold, Option<Vec<Bucket>>), DomainError> {
    let current = row.standing.as_ref();
    let columns = &board.scores.tiebreaks;
    if let Op::Set(_) = &req.op {
        return Ok((correct(current, (score, ties), &req.match_id, at), None));
    }
    let Some(r) = rolling_of(board) else {
        let fold = (board.policy).fold(columns, current, (score, ties), &req.match_id, at)?;
        return Ok((fold, None));
    };
    let live = r.live(&row.buckets, as_of);
    let ts = req.event_ts.unwrap_or(as_of);
    let buckets = r.with(board.policy, columns, &live, (score, ties), ts, at)?;
    let fold = refold(board.policy, columns, current, &buckets, &req.match_id, at)?;
    // Adding a result always leaves a bucket.
    Ok((fold.unwrap_or(Fold::Unchanged), Some(buckets)))
}

/// A tournament result's attempt whose count moved: the membership read again, as the
/// next write's count, or why it can count no more (no member, no attempts left; the
/// inner error, which stands only if the match turns out not to have been written by a
/// copy of this request meanwhile).
async fn recount<'a, S: ScoreStore, I>(
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
    member: Option<crate::tournament::Member>,
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

/// Why `board` takes no new result now, if it does not: the event is outside its
/// window, the window has closed, or the board is not ACTIVE.
fn refusal(board: &Board, req: &SubmitScore, now: i64) -> Option<ServiceError> {
    let outside = board
        .window
        .as_ref()
        .zip(req.event_ts)
        .is_some_and(|(w, ts)| !w.window.contains(ts));
    // On a rolling board: a result already out of the window would never count.
    let aged = rolling_of(board)
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

/// The player's place before this submission, when asked for (`None` otherwise): its
/// rank goes into the receipt, and a result that changes nothing answers with it, so
/// that such a result costs one index round trip, not two.
async fn place_before<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Option<Result<Placed, IndexError>> {
    if !req.want_previous_rank {
        return None;
    }
    let placed = placed_now(ctx, req, dir).await;
    if let Err(error) = &placed {
        warn!(%error, "previous rank unavailable");
    }
    Some(placed)
}

/// The player's place on the board now (one index read).
async fn placed_now<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Result<Placed, IndexError> {
    ctx.index
        .around(&req.board, dir, &req.player, 0, RankMode::Unique)
        .await
        .map(|a| a.map_or(Placed::Unranked, |a| Placed::At(a.rank, a.total)))
}

/// The standing the row holds after this submission (the new one, or the current one
/// when the fold changed nothing) and the receipt to keep for it.
fn outcome<'a>(
    req: &SubmitScore,
    (score, ties): &(Score, Ties),
    current: Option<&'a Standing>,
    fold: &'a Fold,
) -> (&'a Standing, Receipt) {
    let previous_score = current.map(|c| c.score);
    let (standing, update_applied) = match (fold, current) {
        (Fold::Applied(next), _) => (next, true),
        (Fold::Unchanged, Some(cur)) => (cur, false),
        // A first submission always applies; kept total for the type checker.
        (Fold::Unchanged, None) => unreachable!("a fold without a standing always applies"),
    };
    let receipt = Receipt {
        submitted: *score,
        submitted_ties: ties.clone(),
        score: standing.score,
        ties: standing.ties.clone(),
        previous_score,
        update_applied,
        updated_at: standing.reached_at,
        last_match_id: standing.last_match_id.clone(),
        previous_rank: None,
        metadata_digest: req.metadata.as_ref().map(Metadata::digest),
        set: req.op.is_set(),
        attempt: None,
    };
    (standing, receipt)
}

/// A correction's audit record (`op: set`): who, why, and the standing before and
/// after, written with the row so that no correction goes unrecorded.
fn correction_audit(req: &SubmitScore, board: &Board, r: &Receipt) -> Option<AuditRecord> {
    let Op::Set(c) = &req.op else {
        return None;
    };
    let mut audit = record(&c.actor, AuditAction::SetScore, &c.reason);
    audit.leaderboard_id = Some(req.board.clone());
    audit.player_id = Some(req.player.clone());
    let show = |s| board.scores.show(s);
    audit.detail = serde_json::json!({
        "match_id": req.match_id,
        "previous_score": r.previous_score.map(show),
        "score": show(r.score),
        "update_applied": r.update_applied,
    });
    if let (Some(subscores), Some(detail)) = (
        board.scores.tiebreaks.shown(&r.ties),
        audit.detail.as_object_mut(),
    ) {
        detail.insert("subscores".into(), subscores.into());
    }
    Some(audit)
}

/// Answers a retry from its receipt, kept in `row` or (while one may be) in a receipt
/// item of its own; `None` if the match is new to the row. `result` is the submission
/// at the board's places and columns ([`SubmitScore::on`]).
async fn replay<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    (score, ties): &(Score, Ties),
    row: &Row,
) -> Result<Option<IngestReply>, ServiceError> {
    let dir = board.policy.direction();
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
    let mut reply = IngestReply::new(board, req, &receipt, true);
    place(ctx, req, dir, None, None, None, &mut reply).await;
    Ok(Some(reply))
}

/// Fills in the rank: applies `standing` to the index (write-through) or, when nothing
/// changed, takes the place already `known` or reads the player's current one. Index
/// failures leave `rank` null.
async fn place<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
    standing: Option<&Standing>,
    expire_at: Option<i64>,
    known: Option<Result<Placed, IndexError>>,
    reply: &mut IngestReply,
) {
    if !ctx.settings.write_through {
        return;
    }
    let placed = match (standing, known) {
        (Some(s), _) => {
            let entry = IndexEntry::standing(&req.board, dir, req.player.as_str(), s, expire_at);
            ctx.index.apply(&entry).await.map(|p| match p.health {
                Health::Ready => Placed::At(p.rank, p.total),
                // A rank from an incomplete index (wiped, stale, rebuilding) would be wrong.
                other => Placed::NotReady(other),
            })
        }
        (None, Some(known)) => known,
        (None, None) => placed_now(ctx, req, dir).await,
    };
    match placed {
        Ok(Placed::At(rank, total)) => {
            reply.rank = Some(rank);
            reply.total = Some(total);
        }
        Ok(Placed::Unranked) => {}
        Ok(Placed::NotReady(health)) | Err(IndexError::NotReady(health)) => {
            ctx.repairs.report(&ctx.index, &req.board, health).await;
        }
        Err(error) => warn!(%error, "rank index unavailable; the stream will catch it up"),
    }
}

/// Where the write-through found the player.
enum Placed {
    At(u64, u64),
    /// Not on the board (a replayed receipt whose standing is gone from the index).
    Unranked,
    /// The board's index is not complete: no rank to give.
    NotReady(Health),
}
