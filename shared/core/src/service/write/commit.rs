//! Stage 3, commit: what was decided written with its row, in one conditional write on
//! the row's revision. A result: the new standing (or the current one) with its receipt,
//! a correction's audit record, a tournament result's attempt. A held result: the row's
//! standing untouched, a receipt marked held (so a retry answers the same) and the result
//! in the game's review queue. An operator's decision on a held result: the held
//! receipt replaced by the decision's, the queue item released or marked rejected, and
//! the audit record. Whichever, the receipt is written, so a retry replays.

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::record;
use crate::store::{
    AttemptCount, AuditAction, AuditRecord, Buckets, Commit, CommitOutcome, HeldResult,
    KeptReceipt, QueueChange, Receipt, Review, Row, RowAt, StandingStore,
};
use leaderboard_rules::board::{Board, Fold, Standing};
use leaderboard_rules::ids::MatchId;
use leaderboard_rules::integrity::Tripped;
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::rolling::Bucket;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

use super::reply::IngestReply;
use super::request::{Op, SubmitScore};

/// What a commit did.
pub(crate) enum Committed {
    Written(Box<Written>),
    /// Nothing written: the row moved since it was read, or a tournament result's count
    /// did (read again).
    Moved(CommitOutcome),
}

/// A commit written: the reply (not yet placed) and the standing the index is to take,
/// when the write moved it.
pub(crate) struct Written {
    pub reply: IngestReply,
    pub applied: Option<Standing>,
}

/// Where the row stands and what the write carries beside the result.
#[derive(Clone, Copy)]
pub(crate) struct Writing<'a> {
    pub row: &'a Row,
    pub result: &'a (Score, Ties),
    /// The player's rank before this result, when asked for (kept in the receipt).
    pub previous_rank: Option<u64>,
    /// When the board's index entries expire (a window board's), s.
    pub index_expire_at: Option<i64>,
    /// The wall clock, ms.
    pub now: i64,
}

/// Writes a result the board takes: `fold` (with a rolling board's `buckets`) and its
/// receipt, counting the tournament attempt `counted` in the same write.
pub(super) async fn commit<S: StandingStore, I>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    w: Writing<'_>,
    (fold, buckets): (&Fold, Option<&[Bucket]>),
    counted: Option<AttemptCount<'_>>,
) -> Result<Committed, ServiceError> {
    let (standing, mut receipt) = outcome(req, w.result, w.row.standing.as_ref(), fold);
    receipt.previous_rank = w.previous_rank;
    receipt.attempt = counted.map(|a| a.after());
    let audit = correction_audit(req, board, &receipt);
    let commit = Commit {
        at: at_row(board, req, &w),
        standing: Some(standing),
        receipt: kept(ctx, req, &receipt, w.now / 1000),
        ranked: board.rank_index,
        now_s: w.now / 1000,
        attempt: counted,
        audit: audit.as_ref(),
        buckets: board.rolling().zip(buckets).map(|(r, b)| Buckets {
            buckets: b,
            next_expiry: r.next_expiry(b),
        }),
        queue: None,
    };
    match ctx.store.commit(&commit).await? {
        CommitOutcome::Committed => Ok(Committed::Written(Box::new(Written {
            reply: IngestReply::new(board, req, &receipt, false),
            applied: receipt.update_applied.then(|| standing.clone()),
        }))),
        moved => Ok(Committed::Moved(moved)),
    }
}

/// Writes a held result with its row: the standing untouched, a receipt marked held,
/// the result as received in the game's queue with the rule it broke; it keeps its
/// arrival (`at`, ms) as its reached-at if approved.
pub(super) async fn hold<S: StandingStore, I>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    w: Writing<'_>,
    tripped: Tripped,
    at: i64,
) -> Result<Committed, ServiceError> {
    let (score, ties) = w.result;
    let current = w.row.standing.as_ref();
    let receipt = Receipt {
        previous_rank: w.previous_rank,
        ..review_receipt(
            (*score, ties),
            current,
            current.map(|c| c.score),
            false,
            (&req.match_id, at),
            req.metadata.as_ref(),
            Some(Review::Held(tripped.rule)),
        )
    };
    let held = HeldResult {
        game: board.game().unwrap_or_default().to_owned(),
        leaderboard_id: req.board.clone(),
        player_id: req.player.clone(),
        match_id: req.match_id.clone(),
        score: *score,
        ties: ties.clone(),
        event_ts: req.event_ts,
        reached_at: at,
        metadata: req.metadata.clone(),
        rule: tripped.rule,
        value: tripped.value,
        limit: tripped.limit,
        standing: current.map(|s| s.score),
        held_at: at,
        scores: board.scores,
    };
    let now_s = at / 1000;
    let commit = Commit {
        at: at_row(board, req, &w),
        standing: current,
        receipt: kept(ctx, req, &receipt, now_s),
        ranked: board.rank_index,
        now_s,
        attempt: None,
        audit: None,
        // A rolling board's row keeps its buckets as they are.
        buckets: board.rolling().map(|r| Buckets {
            buckets: &w.row.buckets,
            next_expiry: r.next_expiry(&w.row.buckets),
        }),
        queue: Some(QueueChange::Hold(&held)),
    };
    let outcome = ctx.store.commit(&commit).await?;
    if outcome != CommitOutcome::Committed {
        return Ok(Committed::Moved(outcome));
    }
    crate::service::metrics::tally("ResultsHeld", 1);
    tracing::info!(
        rule = tripped.rule.code(),
        value = tripped.value,
        limit = tripped.limit,
        "result held for review"
    );
    Ok(Committed::Written(Box::new(Written {
        reply: IngestReply::new(board, req, &receipt, false),
        applied: None,
    })))
}

/// An operator's decision on a held result, as its commit writes it.
#[derive(Clone, Copy)]
pub(crate) struct Deciding<'a> {
    pub held: &'a HeldResult,
    /// Approved (the fold counts) or rejected (it never does).
    pub approved: bool,
    /// The decision's audit record, written with the row.
    pub audit: &'a AuditRecord,
    /// When it was decided (ms): the clock its fold was made by.
    pub at: i64,
}

/// Writes a decision on a held result with its row, `fold` being what the decision
/// does to the standing (nothing for a rejection): the held receipt replaced by one that
/// says how it was decided (kept as long as the held one was), the queue item released
/// or marked rejected, the audit record, in the row's one conditional write.
pub(super) async fn decision<S: StandingStore, I>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    w: Writing<'_>,
    (fold, buckets): (&Fold, Option<&[Bucket]>),
    d: Deciding<'_>,
) -> Result<Committed, ServiceError> {
    let held = d.held;
    let current = w.row.standing.as_ref();
    let standing = match fold {
        Fold::Applied(s) => Some(s),
        Fold::Unchanged => current,
    };
    let applied = matches!(fold, Fold::Applied(_));
    let receipt = review_receipt(
        (held.score, &held.ties),
        standing,
        current.map(|c| c.score),
        applied,
        (&held.match_id, held.reached_at),
        held.metadata.as_ref(),
        (!d.approved).then_some(Review::Rejected),
    );
    // The row without the held receipt, which the decision's receipt replaces.
    let mut rest = w.row.clone();
    rest.receipts.retain(|k| k.match_id != held.match_id);
    // The held receipt's own time, while the row keeps it: the decision is not a new
    // result (the rate rule counts results by their receipts' times).
    let expires_at = (w.row.receipts.iter())
        .find(|k| k.match_id == held.match_id)
        .map_or_else(
            || kept(ctx, req, &receipt, w.now / 1000).expires_at,
            |k| k.expires_at,
        );
    let kept_buckets = buckets.unwrap_or(&w.row.buckets);
    let commit = Commit {
        at: RowAt {
            row: &rest,
            ..at_row(board, req, &w)
        },
        standing,
        receipt: KeptReceipt {
            match_id: held.match_id.clone(),
            receipt: receipt.clone(),
            expires_at,
        },
        ranked: board.rank_index,
        now_s: w.now / 1000,
        attempt: None,
        audit: Some(d.audit),
        buckets: board.rolling().map(|r| Buckets {
            buckets: kept_buckets,
            next_expiry: r.next_expiry(kept_buckets),
        }),
        queue: Some(match d.approved {
            true => QueueChange::Release(held),
            false => QueueChange::Reject(held),
        }),
    };
    match ctx.store.commit(&commit).await? {
        CommitOutcome::Committed => Ok(Committed::Written(Box::new(Written {
            reply: IngestReply::new(board, req, &receipt, false),
            applied: standing.filter(|_| applied).cloned(),
        }))),
        moved => Ok(Committed::Moved(moved)),
    }
}

/// The row the write is conditional on.
fn at_row<'a>(board: &Board, req: &'a SubmitScore, w: &Writing<'a>) -> RowAt<'a> {
    RowAt {
        board: &req.board,
        player: &req.player,
        direction: board.policy.direction(),
        row: w.row,
        index_expire_at: w.index_expire_at,
    }
}

/// `receipt` as the row keeps it for `req`'s match, from `now_s` for the receipt TTL.
fn kept<S, I>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    receipt: &Receipt,
    now_s: i64,
) -> KeptReceipt {
    KeptReceipt {
        match_id: req.match_id.clone(),
        receipt: receipt.clone(),
        expires_at: now_s + ctx.settings.receipt_ttl.as_secs() as i64,
    }
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
        review: None,
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

/// The receipt of a result under review: held (the standing as it was), or decided
/// (the standing the decision left, `applied` if it moved). Without a standing it
/// answers with the result itself, reached `at`.
fn review_receipt(
    (score, ties): (Score, &Ties),
    standing: Option<&Standing>,
    previous: Option<Score>,
    applied: bool,
    (match_id, at): (&MatchId, i64),
    metadata: Option<&Metadata>,
    review: Option<Review>,
) -> Receipt {
    Receipt {
        submitted: score,
        submitted_ties: ties.clone(),
        score: standing.map_or(score, |s| s.score),
        ties: standing.map_or_else(|| ties.clone(), |s| s.ties.clone()),
        previous_score: previous,
        update_applied: applied,
        updated_at: standing.map_or(at, |s| s.reached_at),
        last_match_id: standing.map_or_else(|| match_id.clone(), |s| s.last_match_id.clone()),
        previous_rank: None,
        metadata_digest: metadata.map(Metadata::digest),
        set: false,
        attempt: None,
        review,
    }
}
