//! The write path: one result recorded exactly once per `(board, player, match_id)`,
//! then written through to the rank index. docs/cost.md has the protocol, with every
//! crash point and why each invariant holds; docs/architecture.md draws the stages.
//!
//! The stages, each returning a value and calling no other stage (the driver here
//! chains them, in one loop):
//!
//! 1. `prepare`: the player's row read (strongly consistent, or eventually for a
//!    match's many boards); a match the row (or, while one may, a receipt item of its
//!    own) knows is a retry, answered from its receipt; what the board does not take
//!    now refused (closed, outside its window, not ACTIVE in this container's view of
//!    it, at most `BOARD_CACHE_TTL_MS` old; see `StandingStore::commit` for why the
//!    status is not in the write's condition), and a banned player (read after the row).
//! 2. `decide`: the result folded with the board's policy, then judged by its
//!    integrity rules: a fold to write, or a rule that holds it for review.
//! 3. `commit`: the fold (or the hold) written with the row and the result's receipt,
//!    in one conditional write on the row's revision; the receipt is written whether or
//!    not the standing changes, so a retry returns the same outcome. A row that moved
//!    meanwhile is read again, with the ban, and decided again (jittered backoff).
//! 4. `place`: the new standing applied to Redis (version-checked) and the player's
//!    rank put in the reply. If Redis fails the write still stands (`rank: null`); the
//!    stream projector applies it later.
//!
//! The values they pass live in [`request`] (what a result is) and [`reply`] (what it
//! answers). Single results, a match's boards (`scores`) and tournament results drive
//! them through [`write`]; the review queue's decisions (`integrity`) through
//! `decide_held`, with the fold its decision makes.

mod commit;
mod decide;
mod place;
mod prepare;
pub mod reply;
pub mod request;

use tracing::warn;

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{
    AttemptCount, CommitOutcome, Consistency, IndexEntry, ModerationStore, RankIndex, Row,
    StandingStore, TournamentStore,
};
use leaderboard_rules::board::{Board, Fold};
use leaderboard_rules::rolling::Bucket;
use leaderboard_rules::time::now_ms;

pub(crate) use commit::Deciding;
use commit::{Committed, Writing, Written};
pub(crate) use decide::fold_result;
use decide::{Decision, Judging, Times};
use place::{PlaceBy, Placed};
pub(crate) use place::{Unplaced, place_all};
pub(crate) use prepare::{Prepared, check_ban, check_event_ts};
use reply::IngestReply;
use request::SubmitScore;

/// Optimistic attempts before giving up with [`ServiceError::Contention`].
pub(crate) const MAX_ATTEMPTS: u32 = 64;

/// Stage 1 for a driver: the row read and a retry answered, its reply placed as the
/// board stands now.
pub(crate) async fn prepare<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    consistency: Consistency,
) -> Result<Prepared, ServiceError> {
    match prepare::prepare(ctx, board, req, consistency).await? {
        Prepared::Replay(reply) => Ok(Prepared::Replay(replayed(ctx, board, reply).await)),
        write => Ok(write),
    }
}

/// A retry's reply, answered from its receipt, placed as the board stands now.
async fn replayed<S, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    reply: IngestReply,
) -> IngestReply {
    place::place(ctx, unplaced_replay(board, reply)).await
}

/// A retry's reply, its place to read.
fn unplaced_replay(board: &Board, reply: IngestReply) -> Unplaced {
    Unplaced {
        dir: board.policy.direction(),
        by: PlaceBy::Reading { current: None },
        reply,
    }
}

/// Stages 2-4 over `row` (as [`prepare`] read it): [`record`], then the player placed.
pub(crate) async fn write<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
    row: Row,
    counted: Option<AttemptCount<'_>>,
) -> Result<IngestReply, ServiceError> {
    let unplaced = record(ctx, board, req, row, counted).await?;
    Ok(place::place(ctx, unplaced).await)
}

/// Stages 2-3 over `row` (as [`prepare`] read it), read again and decided again while
/// the row moves; the reply comes back with its place still to find. A tournament
/// result's attempt (`counted`) is counted in the same write, or the write refused.
pub(crate) async fn record<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
    mut row: Row,
    mut counted: Option<AttemptCount<'_>>,
) -> Result<Unplaced, ServiceError> {
    let dir = board.policy.direction();
    let result = req.on(board)?;
    let rules = decide::rules_for(board, &req).filter(|_| counted.is_none());
    // The board's top (for its top rule) is read beside the player's place.
    let (mut before, top) = tokio::join!(
        place::place_before(ctx, &req, dir),
        decide::top_of(ctx, board, rules)
    );
    let judging = rules.map(|rules| Judging {
        rules,
        top,
        receipt_ttl_s: ctx.settings.receipt_ttl.as_secs() as i64,
    });
    let previous_rank = match &before {
        Some(Ok(Placed::At(rank, _))) => Some(*rank),
        _ => None,
    };
    let index_expire_at = ctx.settings.index_expire_at(board);
    for attempt in 0..MAX_ATTEMPTS {
        let now = now_ms();
        let t = Times {
            at: req.reached_at.unwrap_or(now),
            as_of: ctx.clock.now(),
            now,
        };
        let decision = match decide::decide(board, &req, &row, (result.0, &result.1), judging, t) {
            Ok(decision) => decision,
            // A retry of an accepted match must replay, even if folding it again would
            // now be refused (a SUM total near the limit); the row may have been stale.
            Err(refused) => {
                let fresh = (ctx.store)
                    .get_row(&req.board, &req.player, Consistency::Strong)
                    .await?;
                let receipt = prepare::replay(ctx, board, &req, &result, &fresh).await?;
                let reply = receipt.ok_or(ServiceError::from(refused))?;
                return Ok(unplaced_replay(board, reply));
            }
        };
        let w = Writing {
            row: &row,
            result: &result,
            previous_rank,
            index_expire_at,
            now,
        };
        let committed = match &decision {
            Decision::Hold(tripped) => commit::hold(ctx, board, &req, w, *tripped, t.at).await?,
            Decision::Apply { fold, buckets } => {
                let decided = (fold, buckets.as_deref());
                commit::commit(ctx, board, &req, w, decided, counted).await?
            }
        };
        let moved = match committed {
            Committed::Written(written) => {
                let Written { reply, applied } = *written;
                let entry = |s| {
                    IndexEntry::standing(&req.board, dir, req.player.as_str(), s, index_expire_at)
                };
                let by = match (&applied, before.take()) {
                    (Some(standing), _) => PlaceBy::Applying(entry(standing)),
                    // Unchanged, the player's place is the one just read before the write.
                    (None, Some(known)) => PlaceBy::Known(known),
                    (None, None) => PlaceBy::Reading {
                        current: row.standing.as_ref().map(entry),
                    },
                };
                return Ok(Unplaced { dir, by, reply });
            }
            Committed::Moved(moved) => moved,
        };
        tokio::time::sleep(crate::service::backoff(attempt)).await;
        // A tournament result's count moved: read again before the row, so that a count
        // that includes a copy of this match comes with that copy's receipt.
        let recounted = match moved {
            CommitOutcome::AttemptRefused => {
                Some(prepare::recount(ctx, &req.player, counted).await?)
            }
            _ => None,
        };
        row = (ctx.store)
            .get_row(&req.board, &req.player, Consistency::Strong)
            .await?;
        if let Some(reply) = prepare::replay(ctx, board, &req, &result, &row).await? {
            return Ok(unplaced_replay(board, reply));
        }
        if let Some(recounted) = recounted {
            counted = Some(recounted?);
        }
        if let Some(game) = board.game() {
            check_ban(ctx, game, &req.player).await?;
        }
    }
    warn!(attempts = MAX_ATTEMPTS, "gave up under write contention");
    Err(ServiceError::Contention)
}

/// Stages 3-4 for an operator's decision on a held result, against `row` as read: the
/// decision (`fold`, nothing for a rejection, with a rolling board's `buckets`)
/// committed with the row, the queue item and the audit record, then the standing it
/// moved written through to the index. `None` when the row or the queue moved since it
/// was read (nothing written): the caller reads again.
pub(crate) async fn decide_held<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    decided: (&Fold, Option<&[Bucket]>),
    deciding: Deciding<'_>,
) -> Result<Option<IngestReply>, ServiceError> {
    let index_expire_at = ctx.settings.index_expire_at(board);
    let result = (deciding.held.score, deciding.held.ties.clone());
    let w = Writing {
        row,
        result: &result,
        previous_rank: None,
        index_expire_at,
        now: deciding.at,
    };
    let Committed::Written(written) =
        commit::decision(ctx, board, req, w, decided, deciding).await?
    else {
        return Ok(None);
    };
    let Written { reply, applied } = *written;
    let Some(standing) = &applied else {
        return Ok(Some(reply));
    };
    let dir = board.policy.direction();
    let entry = IndexEntry::standing(
        &req.board,
        dir,
        req.player.as_str(),
        standing,
        index_expire_at,
    );
    let by = PlaceBy::Applying(entry);
    Ok(Some(place::place(ctx, Unplaced { dir, by, reply }).await))
}
