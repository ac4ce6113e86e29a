//! Stage 2, decide: the result folded into the row with the board's policy (or an
//! operator's correction, or a rolling board's buckets), then judged by the board's
//! integrity rules over what the write already holds: the result, the row (standing and
//! receipts), the board's top read with the player's place, the result's metadata
//! (docs/integrity.md). Pure but for [`top_of`], read once before the attempts.

use crate::service::Context;
use crate::store::{RankIndex, Row};
use leaderboard_rules::board::{Board, Fold, correct};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::integrity::{Candidate, DURATION_FIELD, Integrity, Tripped};
use leaderboard_rules::rolling::{Bucket, refold};
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

use super::request::{Op, SubmitScore};

/// What an attempt decided.
pub(crate) enum Decision {
    /// Write this fold, with the rolling board's buckets it leaves.
    Apply {
        fold: Fold,
        buckets: Option<Vec<Bucket>>,
    },
    /// Hold the result for review: the rule it broke.
    Hold(Tripped),
}

/// What judging needs beyond the row: the board's rules, its best score when a rule
/// needs it, and how long a receipt is kept (the rate rule counts the last minute's).
#[derive(Clone, Copy)]
pub(crate) struct Judging<'a> {
    pub rules: &'a Integrity,
    pub top: Option<Score>,
    pub receipt_ttl_s: i64,
}

/// The times an attempt runs at, ms: when the result was reached (`at`, what the board
/// orders ties by), the context's clock (`as_of`, a rolling board's window) and the
/// wall clock (`now`, the receipts' age).
#[derive(Clone, Copy)]
pub(crate) struct Times {
    pub at: i64,
    pub as_of: i64,
    pub now: i64,
}

/// Folds `result` into `row`, then judges it: the fold to write, the rule that holds it,
/// or why the board refuses it (a SUM total past its limit).
pub(super) fn decide(
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    (score, ties): (Score, &Ties),
    judging: Option<Judging<'_>>,
    t: Times,
) -> Result<Decision, DomainError> {
    let (fold, buckets) = fold_result(board, req, row, (score, ties), t.at, t.as_of)?;
    let fold = match row.standing {
        // A player whose standing was removed starts over after the removal.
        None => fold.after_removal(row.version),
        Some(_) => fold,
    }
    .carrying(req.metadata.clone());
    let tripped = judging.and_then(|j| judge(j, board, req, row, score, &fold, t.now / 1000));
    Ok(match tripped {
        Some(tripped) => Decision::Hold(tripped),
        None => Decision::Apply { fold, buckets },
    })
}

/// The fold of `result`, reached `at`, into `row`: the board's policy, or an operator's
/// correction; on a rolling board the result joins its time's bucket, the buckets that
/// have left by `as_of` (the context's clock) are dropped, and the standing is what the
/// live ones give (returned with them).
pub(crate) fn fold_result(
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
    let Some(r) = board.rolling() else {
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
    match ctx.index.top(board.order(), 1).await {
        Ok((keys, _)) => keys.first().map(|k| k.score),
        Err(error) => {
            tracing::warn!(%error, "the board's top is unknown; the top rule is skipped");
            None
        }
    }
}

/// The first rule the result breaks, judged against the row as read.
fn judge(
    j: Judging<'_>,
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    score: Score,
    fold: &Fold,
    now_s: i64,
) -> Option<Tripped> {
    let next = match fold {
        Fold::Applied(s) => Some(s.score),
        Fold::Unchanged => None,
    };
    j.rules.judge(&Candidate {
        policy: board.policy,
        score,
        current: row.standing.as_ref().map(|s| s.score),
        next,
        recent: recent(row, now_s, j.receipt_ttl_s),
        top: j.top,
        duration_ms: duration_ms(req),
    })
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
