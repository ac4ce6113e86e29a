//! [`ModerationStore`]: bans and the audit trail of operators' actions.

use leaderboard_rules::page::Paging;
use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};

/// A player banned from a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ban {
    pub game: String,
    pub player_id: PlayerId,
    pub reason: String,
    /// Who banned them (an IAM principal, or the local key's stand-in).
    pub actor: String,
    /// When, ms since the epoch.
    pub at: i64,
}

/// What an operator did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditAction {
    /// A standing removed from one board.
    RemoveEntry,
    Ban,
    Unban,
    /// A player erased everywhere (the record keeps no id of theirs).
    Erase,
    /// A board's status changed (`PATCH /leaderboards/{lb}`).
    BoardStatus,
    /// Fields of a player's profile card reset (`PATCH /players/{p}/profile`).
    ResetProfile,
    /// A tournament defined (`POST /tournaments`).
    CreateTournament,
    /// A standing corrected by a result with `op: set`, audited in the same write.
    SetScore,
    /// A held result approved (applied as at its arrival) or rejected, audited in the
    /// same write as its row (docs/integrity.md).
    ApproveResult,
    RejectResult,
    /// A tournament's definition changed (`PATCH /tournaments/{t}`), audited in the
    /// same write as the definition.
    UpdateTournament,
    /// A board's or a family's integrity rules changed (docs/integrity.md).
    SetIntegrity,
    /// A board's standings exported to a file in the stack's bucket (docs/operations.md).
    Export,
    /// A board reset now: its standings sealed as a window of their own and taken off
    /// (docs/operations.md).
    Reset,
    /// A board's or a family's reward table changed (docs/rewards.md).
    SetRewards,
}

/// One operator action, as the audit trail keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditRecord {
    /// Unique, and orders the trail: `{at, 13 digits}-{random}`.
    pub id: String,
    /// When, ms since the epoch.
    pub at: i64,
    pub actor: String,
    pub action: AuditAction,
    pub reason: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaderboard_id: Option<LeaderboardId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub game: Option<String>,
    /// The player acted on; removed from every record when the player is erased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<PlayerId>,
    /// What the action found or changed (e.g. the removed score, a status change).
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub detail: serde_json::Value,
}

/// One page of the audit trail, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditPage {
    pub records: Vec<AuditRecord>,
    /// The id of the last record, when more may follow.
    pub next: Option<String>,
}

/// One page of a game's bans, in player id order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BanPage {
    pub bans: Vec<Ban>,
    /// The last ban's player id, when more may follow.
    pub next: Option<String>,
}

/// Bans and the audit trail.
pub trait ModerationStore: Send + Sync {
    /// Records (or replaces) a ban.
    fn put_ban(&self, ban: &Ban) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn get_ban(
        &self,
        game: &str,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<Ban>, StoreError>> + Send;

    /// Lifts a ban; the ban that was lifted, if there was one.
    fn delete_ban(
        &self,
        game: &str,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<Ban>, StoreError>> + Send;

    /// Up to `page.limit` of the game's bans, in player id order, after the player
    /// `page.after`.
    fn bans_page(
        &self,
        game: &str,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<BanPage, StoreError>> + Send;

    /// Every ban of the player, in any game (for an erasure and the player's page).
    fn bans_of(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Vec<Ban>, StoreError>> + Send;

    fn append_audit(
        &self,
        record: &AuditRecord,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Up to `limit` records older than the record `before` (from the newest if `None`).
    fn audit_page(
        &self,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<AuditPage, StoreError>> + Send;

    /// Takes the player's id out of every audit record that names them; returns how
    /// many records it changed.
    fn redact_audit(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}
