//! The in-memory [`ModerationStore`]: bans (also checked by the commit) and the audit
//! trail, newest first.

use super::store::MemoryStore;
use crate::store::StoreError;
use crate::store::{AuditPage, AuditRecord, Ban, BanPage, ModerationStore};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::Paging;

impl ModerationStore for MemoryStore {
    async fn put_ban(&self, ban: &Ban) -> Result<(), StoreError> {
        self.with(|t| {
            let key = (ban.game.clone(), ban.player_id.to_string());
            t.bans.insert(key, ban.clone());
        })
    }

    async fn get_ban(&self, game: &str, player: &PlayerId) -> Result<Option<Ban>, StoreError> {
        self.with(|t| t.bans.get(&(game.to_owned(), player.to_string())).cloned())
    }

    async fn delete_ban(&self, game: &str, player: &PlayerId) -> Result<Option<Ban>, StoreError> {
        self.with(|t| t.bans.remove(&(game.to_owned(), player.to_string())))
    }

    async fn bans_page(&self, game: &str, page: Paging<'_>) -> Result<BanPage, StoreError> {
        self.with(|t| {
            let bans: Vec<Ban> = (t.bans.iter())
                .filter(|((g, p), _)| g == game && page.after.is_none_or(|a| p.as_str() > a))
                .map(|(_, b)| b.clone())
                .take(page.limit as usize)
                .collect();
            let next = (bans.len() == page.limit as usize)
                .then(|| bans.last().map(|b| b.player_id.to_string()))
                .flatten();
            BanPage { bans, next }
        })
    }

    async fn bans_of(&self, player: &PlayerId) -> Result<Vec<Ban>, StoreError> {
        self.with(|t| {
            t.bans
                .values()
                .filter(|b| &b.player_id == player)
                .cloned()
                .collect()
        })
    }

    async fn append_audit(&self, record: &AuditRecord) -> Result<(), StoreError> {
        self.with(|t| {
            t.audit.insert(record.id.clone(), record.clone());
        })
    }

    async fn audit_page(&self, page: Paging<'_>) -> Result<AuditPage, StoreError> {
        let Paging {
            after: before,
            limit,
        } = page;
        self.with(|t| {
            let records: Vec<AuditRecord> = t
                .audit
                .values()
                .rev()
                .filter(|r| before.is_none_or(|b| r.id.as_str() < b))
                .take(limit as usize)
                .cloned()
                .collect();
            let next = (records.len() == limit as usize)
                .then(|| records.last().map(|r| r.id.clone()))
                .flatten();
            AuditPage { records, next }
        })
    }

    async fn redact_audit(&self, player: &PlayerId) -> Result<u64, StoreError> {
        self.with(|t| {
            let mut n = 0;
            for r in t.audit.values_mut() {
                if r.player_id.as_ref() == Some(player) {
                    r.player_id = None;
                    n += 1;
                }
            }
            n
        })
    }
}
