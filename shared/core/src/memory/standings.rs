//! [`MemoryStore`]'s players' rows: the conditional commit of a standing with its
//! receipts, a rolling board's roll, a removal's tombstone, receipts and erasure, as
//! DynamoDB's conditional writes give them.

use super::store::{KeptRow, MemoryStore, Stored, Tables, shard_of};
use crate::store::StoreError;
use crate::store::{
    Commit, CommitOutcome, Consistency, EntryKind, IndexEntry, Receipt, Removal, Roll, Row,
    StandingStore,
};
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};

impl Tables {
    /// Whether the row is still as `row` was read (its revision; the twin's rows always
    /// have one once written).
    pub(super) fn unchanged(&self, key: &(LeaderboardId, String), row: &Row) -> bool {
        let rev = self.kept.get(key).map(|k| k.rev);
        rev == row.rev && self.row_version(key) == row.version
    }

    /// The version of the player's row: their standing's or their tombstone's.
    pub(super) fn row_version(&self, key: &(LeaderboardId, String)) -> Option<u64> {
        (self.standings.get(key).map(|s| s.standing.version))
            .or_else(|| self.removed.get(key).map(|r| r.0))
    }

    /// Every row of the board (standings and tombstones) as index entries, by player.
    pub(super) fn rows(&self, lb: &LeaderboardId) -> Vec<IndexEntry> {
        let from = (lb.clone(), String::new())..;
        let standings = (self.standings.range(from.clone()))
            .take_while(|((b, _), _)| b == lb)
            .map(|((_, p), s)| s.entry(lb, p));
        let removed = (self.removed.range(from))
            .take_while(|((b, _), _)| b == lb)
            .map(|((_, p), (v, dir, exp))| {
                let player = PlayerId::parse(p).expect("stored ids are valid");
                IndexEntry::removal(lb, *dir, &player, *v, *exp, EntryKind::Removed)
            });
        let mut rows: Vec<IndexEntry> = standings.chain(removed).collect();
        rows.sort_by(|a, b| a.key.player.cmp(&b.key.player));
        rows
    }
}

impl StandingStore for MemoryStore {
    async fn get_metadata(
        &self,
        rows: &[(LeaderboardId, PlayerId)],
    ) -> Result<Vec<Option<leaderboard_rules::profile::Metadata>>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        for (lb, p) in rows {
            out.push(self.get_standing(lb, p).await?.and_then(|s| s.metadata));
        }
        Ok(out)
    }

    async fn get_row(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        _consistency: Consistency,
    ) -> Result<Row, StoreError> {
        // A round trip: other tasks run meanwhile, as concurrent writers do.
        tokio::task::yield_now().await;
        self.with(|t| {
            let key = (lb.clone(), player.to_string());
            let (rev, receipts, archived_until) = match t.kept.get(&key) {
                Some(k) => (Some(k.rev), k.receipts.clone(), k.archived_until),
                None => (None, Vec::new(), None),
            };
            Row {
                standing: t.standings.get(&key).map(|s| s.standing.clone()),
                buckets: (t.standings.get(&key)).map_or_else(Vec::new, |s| s.buckets.clone()),
                version: t.row_version(&key),
                rev,
                receipts,
                archived_until,
            }
        })
    }

    async fn remove_standing(&self, r: &Removal<'_>) -> Result<CommitOutcome, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| {
            let key = (r.at.board.clone(), r.at.player.to_string());
            if !t.unchanged(&key, r.at.row) {
                return CommitOutcome::StandingChanged;
            }
            t.standings.remove(&key);
            let version = r.version();
            t.removed
                .insert(key.clone(), (version, r.at.direction, r.at.index_expire_at));
            let row = r.at.row.clone();
            let kept = KeptRow {
                rev: r.at.row.next_rev(),
                receipts: row.receipts,
                archived_until: row.archived_until,
            };
            t.kept.insert(key, kept);
            t.stream.push(IndexEntry::removal(
                r.at.board,
                r.at.direction,
                r.at.player,
                version,
                r.at.index_expire_at,
                EntryKind::Removed,
            ));
            CommitOutcome::Committed
        })
    }

    async fn erase_player(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<Option<u64>, StoreError> {
        self.with(|t| {
            let key = (lb.clone(), player.to_string());
            t.receipts
                .retain(|(b, p, _), _| !(b == lb && p == player.as_str()));
            t.kept.remove(&key);
            let old = match (t.standings.remove(&key), t.removed.remove(&key)) {
                (Some(s), _) => Some((s.standing.version, s.direction, s.expire_at)),
                (None, removed) => removed,
            };
            let (version, dir, exp) = old?;
            t.stream.push(IndexEntry::removal(
                lb,
                dir,
                player,
                version,
                exp,
                EntryKind::Erased,
            ));
            Some(version)
        })
    }

    async fn get_receipt(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        match_id: &MatchId,
    ) -> Result<Option<Receipt>, StoreError> {
        self.with(|t| {
            let key = (lb.clone(), player.to_string(), match_id.to_string());
            t.receipts.get(&key).cloned()
        })
    }

    async fn commit(&self, c: &Commit<'_>) -> Result<CommitOutcome, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| {
            let key = (c.at.board.clone(), c.at.player.to_string());
            let kept = c.at.row.keep(c.receipt.clone(), c.now_s);
            for k in &kept.archived {
                let at = (key.0.clone(), key.1.clone(), k.match_id.to_string());
                t.receipts.insert(at, k.receipt.clone());
            }
            if !t.unchanged(&key, c.at.row) {
                return CommitOutcome::StandingChanged;
            }
            if !t.queue_ready(c.queue) {
                return CommitOutcome::StandingChanged;
            }
            if let Some(a) = c.attempt {
                let member = (t.members).get_mut(&(a.occurrence.clone(), c.at.player.to_string()));
                match member {
                    Some(m) if m.attempts == a.seen => m.attempts = a.after(),
                    _ => return CommitOutcome::AttemptRefused,
                }
            }
            let row = KeptRow {
                rev: c.at.row.next_rev(),
                receipts: kept.inline,
                archived_until: kept.archived_until,
            };
            t.kept.insert(key.clone(), row);
            if let Some(audit) = c.audit {
                t.audit.insert(audit.id.clone(), audit.clone());
            }
            t.apply_queue(c.queue);
            let Some(standing) = c.standing else {
                // A held result's row without a standing: a tombstone at the row's version.
                let version = c.at.row.version.unwrap_or(0);
                t.removed
                    .insert(key, (version, c.at.direction, c.at.index_expire_at));
                return CommitOutcome::Committed;
            };
            let stored = Stored {
                standing: standing.clone(),
                direction: c.at.direction,
                expire_at: c.at.index_expire_at,
                buckets: c.buckets.map_or_else(Vec::new, |b| b.buckets.to_vec()),
                next_expiry: c.buckets.and_then(|b| b.next_expiry),
            };
            if c.receipt.receipt.update_applied {
                t.stream
                    .push(stored.entry(c.at.board, c.at.player.as_str()));
            }
            t.removed.remove(&key);
            t.standings.insert(key, stored);
            CommitOutcome::Committed
        })
    }

    async fn roll(&self, r: &Roll<'_>) -> Result<CommitOutcome, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| {
            let key = (r.at.board.clone(), r.at.player.to_string());
            if !t.unchanged(&key, r.at.row) {
                return CommitOutcome::StandingChanged;
            }
            let kept = KeptRow {
                rev: r.at.row.next_rev(),
                receipts: r.at.row.receipts.clone(),
                archived_until: r.at.row.archived_until,
            };
            t.kept.insert(key.clone(), kept);
            let stored = Stored {
                standing: r.standing.clone(),
                direction: r.at.direction,
                expire_at: r.at.index_expire_at,
                buckets: r.buckets.buckets.to_vec(),
                next_expiry: r.buckets.next_expiry,
            };
            if r.at.row.version != Some(r.standing.version) {
                t.stream
                    .push(stored.entry(r.at.board, r.at.player.as_str()));
            }
            t.standings.insert(key, stored);
            CommitOutcome::Committed
        })
    }

    async fn expiring(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        now: i64,
        limit: u32,
    ) -> Result<Vec<PlayerId>, StoreError> {
        self.with(|t| {
            let mut due: Vec<(i64, String)> = (t.standings.iter())
                .filter(|((b, p), _)| b == lb && shard_of(p) == shard)
                .filter_map(|((_, p), s)| {
                    s.next_expiry
                        .filter(|at| *at <= now)
                        .map(|at| (at, p.clone()))
                })
                .collect();
            due.sort();
            (due.into_iter().take(limit as usize))
                .map(|(_, p)| PlayerId::parse(&p).map_err(|e| StoreError::call("expiring", e)))
                .collect::<Result<Vec<_>, _>>()
        })?
    }
}
