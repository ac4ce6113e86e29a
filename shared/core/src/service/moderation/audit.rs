//! `GET /admin/audit?limit=&cursor=`: the audit trail, newest first.

use leaderboard_rules::page::Paging;
use serde::Serialize;

use crate::service::ServiceError;
use crate::store::{AuditAction, AuditRecord, ModerationStore};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::page::limit_within;
use leaderboard_rules::time::rfc3339_ms;

pub(crate) const DEFAULT_AUDIT_LIMIT: u32 = 50;
pub(crate) const MAX_AUDIT_LIMIT: u32 = 200;

/// One record as the API shows it.
#[derive(Debug, Serialize)]
pub struct AuditView {
    pub id: String,
    pub at: String,
    pub actor: String,
    pub action: AuditAction,
    pub reason: String,
    pub leaderboard_id: Option<LeaderboardId>,
    pub game: Option<String>,
    pub player_id: Option<PlayerId>,
    pub detail: serde_json::Value,
}

impl From<AuditRecord> for AuditView {
    fn from(r: AuditRecord) -> Self {
        Self {
            id: r.id,
            at: rfc3339_ms(r.at),
            actor: r.actor,
            action: r.action,
            reason: r.reason,
            leaderboard_id: r.leaderboard_id,
            game: r.game,
            player_id: r.player_id,
            detail: r.detail,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct AuditList {
    pub records: Vec<AuditView>,
    pub next_cursor: Option<String>,
}

/// Parses `limit` (1..=200, default 50) and `cursor` (a record id from a previous page).
pub fn parse_query(
    limit: Option<&str>,
    cursor: Option<&str>,
) -> Result<(u32, Option<String>), DomainError> {
    let limit = limit_within(limit, DEFAULT_AUDIT_LIMIT.into(), MAX_AUDIT_LIMIT.into())? as u32;
    let valid_cursor = |c: &&str| {
        c.len() == 30
            && c.as_bytes()[13] == b'-'
            && c.bytes()
                .enumerate()
                .all(|(i, b)| i == 13 || b.is_ascii_hexdigit())
    };
    let cursor = match cursor {
        None => None,
        Some(c) if valid_cursor(&c) => Some(c.to_owned()),
        Some(_) => return Err(DomainError::InvalidCursor),
    };
    Ok((limit, cursor))
}

/// One page of the trail, newest first.
pub async fn list<S: ModerationStore>(
    store: &S,
    limit: u32,
    cursor: Option<String>,
) -> Result<AuditList, ServiceError> {
    let page = store
        .audit_page(Paging::new(cursor.as_deref(), limit))
        .await?;
    Ok(AuditList {
        records: page.records.into_iter().map(AuditView::from).collect(),
        next_cursor: page.next,
    })
}
