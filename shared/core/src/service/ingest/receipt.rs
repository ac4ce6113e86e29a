//! What a result answers: the reply, the receipt kept in the row (written whether or not
//! the standing changed, so a retry answers the same), a correction's audit record, and a
//! retry answered from its receipt.

use serde::Serialize;

use super::request::{Op, SubmitScore};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::record;
use crate::store::{AuditAction, AuditRecord, RankIndex, Receipt, Review, Row, StandingStore};
use leaderboard_rules::board::{Board, Fold, Standing};
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

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
    /// A result held for review (`status: HELD` and the rule's code): it changed
    /// nothing, and the reply is a 202 (docs/integrity.md).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldNote>,
}

/// What a held result's reply says.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct HeldNote {
    /// Always `HELD`.
    pub status: &'static str,
    /// The rule that held it ([`leaderboard_rules::integrity::Rule::code`]).
    pub rule: &'static str,
}

impl HeldNote {
    pub fn of(rule: leaderboard_rules::integrity::Rule) -> Self {
        Self {
            status: "HELD",
            rule: rule.code(),
        }
    }
}

impl IngestReply {
    pub(crate) fn new(board: &Board, req: &SubmitScore, r: &Receipt, replayed: bool) -> Self {
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
            held: match r.review {
                Some(Review::Held(rule)) => Some(HeldNote::of(rule)),
                _ => None,
            },
        }
    }
}

/// The standing the row holds after this submission (the new one, or the current one
/// when the fold changed nothing) and the receipt to keep for it.
pub(super) fn outcome<'a>(
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
pub(super) fn correction_audit(
    req: &SubmitScore,
    board: &Board,
    r: &Receipt,
) -> Option<AuditRecord> {
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
/// at the board's places and columns ([`SubmitScore::on`]). The reply has no place yet:
/// the caller places it (`placement::replayed`), this reads receipts only.
pub(crate) async fn replay<S: StandingStore, I: RankIndex>(
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
