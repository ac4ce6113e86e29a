//! An operator's decision on a held result's match: approved (applied as the board's
//! policy would have applied it when it arrived) or rejected, on every board that held
//! it. The decision on the match is recorded first (the first one stands), then each
//! board's, with its row and the queue item's removal in one transaction, so it happens
//! once however many operators decide at the same time; a rejection may ban the player
//! (the rule's ban threshold, counting matches).

use serde::Serialize;

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, record};
use crate::service::write::request::{Op, SubmitScore};
use crate::service::write::{self, Deciding, MAX_ATTEMPTS, fold_result};
use crate::store::{
    AuditAction, AuditRecord, Consistency, HeldResult, IngestStore, RankIndex, Review, Row,
};
use leaderboard_rules::board::{Board, Fold, Policy};
use leaderboard_rules::decimal::{Amount, Shown};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::now_ms;

use super::ban_after::ban_if_due;
use super::queue::HeldId;

/// An operator's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Approve,
    Reject,
}

impl Decision {
    fn done(self) -> &'static str {
        match self {
            Self::Approve => "APPROVED",
            Self::Reject => "REJECTED",
        }
    }
}

/// What a decision did.
#[derive(Debug, Serialize)]
pub struct DecisionReply {
    pub id: String,
    pub decision: &'static str,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub match_id: String,
    /// Whether the approved result moved the player's standing (a BEST beaten since
    /// changes nothing).
    pub update_applied: bool,
    /// The player's standing after the decision.
    pub score: Option<Shown>,
    /// The decision had already been made (by this call's retry, or another operator's
    /// same decision): nothing changed now.
    pub replayed: bool,
    /// This rejection brought the player to the board's `ban_after_rejections`: they
    /// are now banned from the game.
    pub banned: bool,
    /// Every board that held the match, each decided by this one decision (the board
    /// the id names among them).
    pub boards: Vec<BoardDecided>,
}

/// What the decision did on one board that held the match.
#[derive(Debug, Clone, Serialize)]
pub struct BoardDecided {
    pub leaderboard_id: LeaderboardId,
    pub update_applied: bool,
    pub score: Option<Shown>,
    pub replayed: bool,
}

impl DecisionReply {
    fn board(&self) -> BoardDecided {
        BoardDecided {
            leaderboard_id: self.leaderboard_id.clone(),
            update_applied: self.update_applied,
            score: self.score,
            replayed: self.replayed,
        }
    }
}

/// Decides one held result's match, once, on every board that held it (docs/integrity.md):
/// approved, it is applied on each as the board's policy would have applied it when it
/// arrived; rejected, it never counts, and counts once toward a ban. The first decision
/// on a match is recorded before any board's: the same decision again finishes what a
/// crash left and answers again (`replayed`); the other way, 409.
pub async fn decide<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    op: &Operator,
    text: &str,
    decision: Decision,
    reason: Reason,
) -> Result<DecisionReply, ServiceError> {
    // An id that is not one names no held result: 404, as a well-formed unknown one.
    let id = HeldId::parse(text).map_err(|_| ServiceError::HeldNotFound(text.to_owned()))?;
    let asked = Asked {
        op,
        decision,
        reason: &reason,
        text,
    };
    let waiting = (ctx.store)
        .held_of_match(&id.game, &id.player, &id.match_id, None)
        .await?;
    if waiting.is_empty() {
        return decided_already(ctx, &id, text, decision).await;
    }
    let approve = decision == Decision::Approve;
    if approve {
        // Refused before anything is recorded, so the match can still be rejected.
        for held in &waiting {
            let board = (ctx.store.get_board(&held.leaderboard_id).await?)
                .ok_or_else(|| ServiceError::BoardNotFound(held.leaderboard_id.clone()))?;
            if archived(&board, held) {
                return Err(ServiceError::HeldWindowSealed(board.leaderboard_id));
            }
        }
    }
    let stands = (ctx.store)
        .claim_decision(&id.game, &id.player, &id.match_id, approve)
        .await?;
    if stands != approve {
        let was = if stands {
            Decision::Approve
        } else {
            Decision::Reject
        };
        return Err(ServiceError::AlreadyDecided {
            id: text.to_owned(),
            decided: was.done().to_lowercase().leak(),
        });
    }
    let mut decided = Vec::with_capacity(waiting.len());
    let mut banned = false;
    for held in &waiting {
        let (reply, board) = decide_board(ctx, &asked, held).await?;
        if decision == Decision::Reject && !banned {
            banned = ban_if_due(ctx, op, &board, held).await?;
        }
        decided.push(reply);
    }
    let boards: Vec<BoardDecided> = decided.iter().map(DecisionReply::board).collect();
    let named = match decided.into_iter().find(|r| r.leaderboard_id == id.board) {
        Some(r) => r,
        None => decided_already(ctx, &id, text, decision).await?,
    };
    Ok(DecisionReply {
        banned,
        boards,
        ..named
    })
}

/// Decides one board's held result of the match (retrying while its row moves); the
/// reply and the board as read.
async fn decide_board<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    asked: &Asked<'_>,
    waiting: &HeldResult,
) -> Result<(DecisionReply, Board), ServiceError> {
    let id = HeldId::of(waiting);
    for attempt in 0..MAX_ATTEMPTS {
        // Read fresh (not the container's cached definition): whether it is sealed.
        let board = (ctx.store.get_board(&waiting.leaderboard_id).await?)
            .ok_or_else(|| ServiceError::BoardNotFound(waiting.leaderboard_id.clone()))?;
        let Some(held) = ctx.store.get_held(&id.game, &id.key).await? else {
            // Another operator's same decision took this board first.
            let reply = decided_already(ctx, &id, &waiting.id(), asked.decision).await?;
            return Ok((reply, board));
        };
        let row = (ctx.store)
            .get_row(&held.leaderboard_id, &held.player_id, Consistency::Strong)
            .await?;
        if let Some(reply) = apply(ctx, asked, &board, &row, &held).await? {
            return Ok((reply, board));
        }
        tokio::time::sleep(crate::service::backoff(attempt)).await;
    }
    Err(ServiceError::Contention)
}

/// The answer for a result no longer in the queue: its receipt says how it was decided.
async fn decided_already<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    id: &HeldId,
    text: &str,
    decision: Decision,
) -> Result<DecisionReply, ServiceError> {
    let not_found = || ServiceError::HeldNotFound(text.to_owned());
    let board = ctx.boards.current(&ctx.store, &id.board).await?;
    let row = (ctx.store)
        .get_row(&id.board, &id.player, Consistency::Strong)
        .await?;
    let receipt = match row.kept_receipt(&id.match_id) {
        Some(r) => r.clone(),
        None => (ctx.store)
            .get_receipt(&id.board, &id.player, &id.match_id)
            .await?
            .ok_or_else(not_found)?,
    };
    let was = match receipt.review {
        Some(Review::Held(_)) => return Err(not_found()),
        Some(Review::Rejected) => Decision::Reject,
        None => Decision::Approve,
    };
    if was != decision {
        return Err(ServiceError::AlreadyDecided {
            id: text.to_owned(),
            decided: was.done().to_lowercase().leak(),
        });
    }
    Ok(DecisionReply {
        id: text.to_owned(),
        decision: was.done(),
        leaderboard_id: id.board.clone(),
        player_id: id.player.clone(),
        match_id: id.match_id.to_string(),
        update_applied: receipt.update_applied,
        score: row.standing.as_ref().map(|s| board.scores.show(s.score)),
        replayed: true,
        banned: false,
        boards: Vec::new(),
    })
}

/// An operator's decision as asked: who, which, why, and the held result's id as given.
struct Asked<'a> {
    op: &'a Operator,
    decision: Decision,
    reason: &'a Reason,
    text: &'a str,
}

/// Whether the side of `board` that `held` arrived on is sealed: its window, or the
/// standings a reset of the board took off since (their archive is sealed).
fn archived(board: &Board, held: &HeldResult) -> bool {
    board.sealed_at.is_some() || (board.reset.as_ref()).is_some_and(|r| held.held_at < r.fence_at)
}

/// Decides the held result against its row as read: the fold the decision makes (an
/// approval's as the board's policy would have made it when the result arrived), then
/// the write stages' commit and place ([`crate::service::write::decide_held`]). `None`
/// when the row or the queue moved (nothing written).
async fn apply<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    asked: &Asked<'_>,
    board: &Board,
    row: &Row,
    held: &HeldResult,
) -> Result<Option<DecisionReply>, ServiceError> {
    let now = now_ms();
    let approved = asked.decision == Decision::Approve;
    // A window sealed since: its sealed results and history are final (docs/integrity.md).
    if approved && archived(board, held) {
        return Err(ServiceError::HeldWindowSealed(board.leaderboard_id.clone()));
    }
    let current = row.standing.as_ref();
    let req = held_request(held);
    let (fold, buckets) = match approved {
        false => (Fold::Unchanged, None),
        true => approved_fold(board, &req, row, held, now)?,
    };
    let fold = match fold {
        Fold::Applied(s) if current.is_none() => Fold::Applied(s).after_removal(row.version),
        f => f,
    }
    .carrying(held.metadata.clone());
    let standing = match &fold {
        Fold::Applied(s) => Some(s),
        Fold::Unchanged => current,
    };
    let audit = decision_audit(asked, board, held, matches!(fold, Fold::Applied(_)));
    let deciding = Deciding {
        held,
        approved,
        audit: &audit,
        at: now,
    };
    let decided = (&fold, buckets.as_deref());
    let Some(reply) = write::decide_held(ctx, board, &req, row, decided, deciding).await? else {
        return Ok(None);
    };
    Ok(Some(DecisionReply {
        id: asked.text.to_owned(),
        decision: asked.decision.done(),
        leaderboard_id: held.leaderboard_id.clone(),
        player_id: held.player_id.clone(),
        match_id: held.match_id.to_string(),
        update_applied: reply.update_applied,
        score: standing.map(|s| board.scores.show(s.score)),
        replayed: false,
        banned: false,
        boards: Vec::new(),
    }))
}

/// The held result as the request it was (its score as received, its arrival as its
/// reached-at).
fn held_request(held: &HeldResult) -> SubmitScore {
    SubmitScore {
        board: held.leaderboard_id.clone(),
        player: held.player_id.clone(),
        match_id: held.match_id.clone(),
        score: Amount::whole("score", held.score),
        subscores: Vec::new(),
        event_ts: held.event_ts,
        want_previous_rank: false,
        reached_at: Some(held.reached_at),
        metadata: held.metadata.clone(),
        op: Op::Policy,
    }
}

/// The decision's audit record: who decided, why, and what it did.
fn decision_audit(
    asked: &Asked<'_>,
    board: &Board,
    held: &HeldResult,
    applied: bool,
) -> AuditRecord {
    let action = match asked.decision {
        Decision::Approve => AuditAction::ApproveResult,
        Decision::Reject => AuditAction::RejectResult,
    };
    let mut audit = record(asked.op, action, asked.reason);
    audit.leaderboard_id = Some(held.leaderboard_id.clone());
    audit.player_id = Some(held.player_id.clone());
    audit.game = (!held.game.is_empty()).then(|| held.game.clone());
    audit.detail = serde_json::json!({
        "match_id": held.match_id,
        "rule": held.rule.code(),
        "score": board.scores.show(held.score),
        "update_applied": applied,
    });
    audit
}

/// The fold of an approved result as the board's policy would have folded it when it
/// arrived: BEST and MIN keep the better (a result beaten since changes nothing), SUM
/// adds (the total reached when its latest result was), LATEST applies only if no later
/// result has (a rolling board puts it in its time's bucket, if that is still in the
/// window).
fn approved_fold(
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    held: &HeldResult,
    now: i64,
) -> Result<(Fold, Option<Vec<leaderboard_rules::rolling::Bucket>>), ServiceError> {
    let later = row
        .standing
        .as_ref()
        .is_some_and(|s| s.reached_at > held.reached_at);
    if board.policy == Policy::Latest && later {
        return Ok((Fold::Unchanged, None));
    }
    if let Some(r) = board.rolling() {
        let ts = held.event_ts.unwrap_or(held.reached_at);
        if !r.counts(ts, now) {
            return Ok((Fold::Unchanged, None));
        }
    }
    // Reached when it arrived, so it ties as it would have; a SUM total that later
    // results moved since was reached when the last of them was, and stays so.
    let at = match (board.policy, row.standing.as_ref()) {
        (Policy::Sum, Some(s)) => held.reached_at.max(s.reached_at),
        _ => held.reached_at,
    };
    let (fold, buckets) = fold_result(board, req, row, (held.score, &held.ties), at, now)?;
    Ok((fold, buckets))
}
