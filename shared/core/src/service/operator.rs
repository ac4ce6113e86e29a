//! Who acts and why: the operator an admin route names, the reason it gives, and the
//! audit record each of its actions leaves (the trail: `moderation::audit`).

use std::hash::{BuildHasher, RandomState};

use serde::Deserialize;

use crate::service::ServiceError;
use crate::store::{AuditAction, AuditRecord, ModerationStore};
use leaderboard_rules::board::BoardStatus;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::now_ms;

/// Longest reason kept.
pub(crate) const MAX_REASON_LEN: usize = 500;

/// Body of every moderation route: why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReasonBody {
    pub reason: Option<serde_json::Value>,
}

/// A validated reason.
#[derive(Debug, Clone)]
pub struct Reason(pub(crate) String);

impl Reason {
    pub fn parse(body: ReasonBody) -> Result<Self, DomainError> {
        match body.reason {
            Some(serde_json::Value::String(s))
                if !s.trim().is_empty() && s.chars().count() <= MAX_REASON_LEN =>
            {
                Ok(Self(s))
            }
            Some(serde_json::Value::String(_)) => Err(DomainError::invalid(
                "reason",
                format!("must be 1 to {MAX_REASON_LEN} characters"),
            )),
            Some(_) => Err(DomainError::invalid("reason", "must be a string")),
            None => Err(DomainError::invalid("reason", "is required")),
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Who acts: the IAM principal the gateway verified (or the local stand-in's).
#[derive(Debug, Clone)]
pub struct Operator(pub String);

/// A new audit record of `action` now, with a unique id that sorts by time.
pub(crate) fn record(op: &Operator, action: AuditAction, reason: &Reason) -> AuditRecord {
    let at = now_ms();
    AuditRecord {
        id: format!("{at:013}-{:016x}", RandomState::new().hash_one(at)),
        at,
        actor: op.0.clone(),
        action,
        reason: reason.0.clone(),
        leaderboard_id: None,
        game: None,
        player_id: None,
        detail: serde_json::Value::Null,
    }
}

/// Records a board's status change (`PATCH /leaderboards/{lb}`) made by `op`.
pub(crate) async fn status_changed<S: ModerationStore>(
    store: &S,
    op: &Operator,
    lb: &LeaderboardId,
    status: BoardStatus,
    reason: Option<String>,
) -> Result<(), ServiceError> {
    let reason = Reason(reason.unwrap_or_else(|| "status change".to_owned()));
    let mut audit = record(op, AuditAction::BoardStatus, &reason);
    audit.leaderboard_id = Some(lb.clone());
    audit.detail = serde_json::json!({ "status": status });
    Ok(store.append_audit(&audit).await?)
}
