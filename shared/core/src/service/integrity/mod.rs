//! Integrity: a result that breaks its board's rules is held for review instead of
//! applied (docs/integrity.md).
//!
//! - `judge` (here): the board's rules over what the write already holds: the result,
//!   the row it read (standing and receipts), the board's top read with the player's
//!   place, the result's metadata. A result that passes costs nothing more.
//! - `hold` (here): the held result written with its row, in one transaction: the row
//!   keeps a receipt marked held (so a retry answers the same, and the standing is
//!   untouched) and the review queue gets the result as received.
//! - `queue`: the operators' review queue: list, approve (applied as the board's
//!   policy would have applied it when it arrived), reject; each decision once.
//! - `dry_run`: which of a board's standings a candidate rule set would have held.

mod dry_run;
mod queue;

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::ingest::{IngestReply, Op, SubmitScore};
use crate::store::{
    Buckets, Commit, CommitOutcome, HeldResult, KeptReceipt, QueueChange, RankIndex, Receipt,
    Review, Row, RowAt, StandingStore,
};
use leaderboard_rules::board::{Board, Fold, Standing};
use leaderboard_rules::integrity::{Candidate, DURATION_FIELD, Integrity, Tripped};
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

pub use dry_run::{DryRunReply, MAX_DRY_RUN, WouldHold, dry_run};
pub use queue::{Decision, DecisionReply, HeldId, HeldView, MAX_HELD_ID, QueuePage, decide, list};

/// The rules that judge `req` on `board`: none for an operator's correction, a
/// tournament's result or a board without rules.
pub(crate) fn rules_for<'a>(board: &'a Board, req: &SubmitScore) -> Option<&'a Integrity> {
    if matches!(req.op, Op::Set(_)) || board.tournament.is_some() {
        return None;
    }
    board.integrity.as_ref().filter(|r| !r.is_empty())
}

/// The board's best score now, when its rules need it and the index can say (read in
/// the same round trip time as the player's place; an index that cannot answer skips
/// the rule, docs/integrity.md).
pub(crate) async fn top_of<S, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    rules: Option<&Integrity>,
) -> Option<Score> {
    if !rules.is_some_and(Integrity::needs_top) {
        return None;
    }
    let dir = board.policy.direction();
    match ctx.index.top(&board.leaderboard_id, dir, 1).await {
        Ok((keys, _)) => keys.first().map(|k| k.score),
        Err(error) => {
            tracing::warn!(%error, "the board's top is unknown; the top rule is skipped");
            None
        }
    }
}

/// The results the row's receipts say the player sent in the minute before `now_s`
/// (a receipt is kept `ttl_s` from its write).
fn recent(row: &Row, now_s: i64, ttl_s: i64) -> u32 {
    let since = now_s - 60;
    (row.receipts.iter())
        .filter(|k| k.expires_at - ttl_s > since)
        .count() as u32
}

/// The match's duration, ms, if the result's metadata says it.
fn duration_ms(req: &SubmitScore) -> Option<i64> {
    let md = req.metadata.as_ref()?.to_object();
    md.get(DURATION_FIELD)?.as_i64()
}

/// The first rule the result breaks, judged against the row as read.
#[allow(clippy::too_many_arguments)]
pub(crate) fn judge(
    rules: &Integrity,
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    score: Score,
    fold: &Fold,
    top: Option<Score>,
    (now_s, ttl_s): (i64, i64),
) -> Option<Tripped> {
    let next = match fold {
        Fold::Applied(s) => Some(s.score),
        Fold::Unchanged => None,
    };
    rules.judge(&Candidate {
        policy: board.policy,
        score,
        current: row.standing.as_ref().map(|s| s.score),
        next,
        recent: recent(row, now_s, ttl_s),
        top,
        duration_ms: duration_ms(req),
    })
}

/// What a held result's write needs beyond the request and the row.
pub(crate) struct Holding<'a> {
    pub result: &'a (Score, Ties),
    pub tripped: Tripped,
    pub previous_rank: Option<u64>,
    pub index_expire_at: Option<i64>,
    /// When it arrived (the reached-at it keeps if approved), ms.
    pub at: i64,
}

/// Writes the held result with its row: the row's standing untouched, a receipt marked
/// held, the result in the game's queue. `None` when the row moved since it was read
/// (nothing written; read again).
pub(crate) async fn hold<S: StandingStore, I>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    h: Holding<'_>,
) -> Result<Option<IngestReply>, ServiceError> {
    let (score, ties) = h.result;
    let current = row.standing.as_ref();
    let receipt = Receipt {
        previous_rank: h.previous_rank,
        ..review_receipt(
            (*score, ties),
            current,
            current.map(|c| c.score),
            false,
            (&req.match_id, h.at),
            req.metadata.as_ref(),
            Some(Review::Held(h.tripped.rule)),
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
        reached_at: h.at,
        metadata: req.metadata.clone(),
        rule: h.tripped.rule,
        value: h.tripped.value,
        limit: h.tripped.limit,
        standing: current.map(|s| s.score),
        held_at: h.at,
        scores: board.scores,
    };
    let now_s = h.at / 1000;
    let rolling = board.rolling();
    let commit = Commit {
        at: RowAt {
            board: &req.board,
            player: &req.player,
            direction: board.policy.direction(),
            row,
            index_expire_at: h.index_expire_at,
        },
        standing: current,
        receipt: KeptReceipt {
            match_id: req.match_id.clone(),
            receipt: receipt.clone(),
            expires_at: now_s + ctx.settings.receipt_ttl.as_secs() as i64,
        },
        ranked: board.rank_index,
        now_s,
        attempt: None,
        audit: None,
        // A rolling board's row keeps its buckets as they are.
        buckets: rolling.map(|r| Buckets {
            buckets: &row.buckets,
            next_expiry: r.next_expiry(&row.buckets),
        }),
        queue: Some(QueueChange::Hold(&held)),
    };
    if ctx.store.commit(&commit).await? != CommitOutcome::Committed {
        return Ok(None);
    }
    crate::service::metrics::tally("ResultsHeld", 1);
    tracing::info!(
        rule = h.tripped.rule.code(),
        value = h.tripped.value,
        limit = h.tripped.limit,
        "result held for review"
    );
    Ok(Some(IngestReply::new(board, req, &receipt, false)))
}

/// The receipt of a result under review: held (the standing as it was), or decided
/// (the standing the decision left, `applied` if it moved). Without a standing it
/// answers with the result itself, reached `at`.
pub(crate) fn review_receipt(
    (score, ties): (Score, &Ties),
    standing: Option<&Standing>,
    previous: Option<Score>,
    applied: bool,
    (match_id, at): (&leaderboard_rules::ids::MatchId, i64),
    metadata: Option<&leaderboard_rules::profile::Metadata>,
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
        metadata_digest: metadata.map(leaderboard_rules::profile::Metadata::digest),
        set: false,
        attempt: None,
        review,
    }
}
