//! [`MemoryStore`]: the source of truth in memory, with DynamoDB's contracts: create-if-
//! absent boards and families, conditional status changes, a commit that writes a
//! player's row (standing and receipts) only if it is unchanged since read, rank-ordered reads and capped
//! counts, shard pages for the rebuild, and the table's stream (every standing written,
//! in order) for the projector and the repair.

use leaderboard_rules::page::Paging;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::store_outage;
use crate::service::ttl_cache::lock;
use crate::store::{
    BoardPage, BoardStore, Checkpoint, IndexEntry, KeptReceipt, RankSketch, Receipt,
};
use crate::store::{FamilyPage, StoreError};
use leaderboard_rules::board::{Board, BoardStatus, Standing};
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::integrity::Integrity;
use leaderboard_rules::order::{Direction, RankKey};
use leaderboard_rules::reset::BoardReset;
use leaderboard_rules::reward::RewardTable;

/// Write shards a board's standings are spread over here (few, but more than one, so
/// the rebuild's walk over shards is exercised).
pub const MEMORY_SHARDS: u64 = 4;

/// A standing as stored: with its board's direction and index expiry, as the table's
/// standing items carry them.
#[derive(Clone)]
pub(super) struct Stored {
    pub(super) standing: Standing,
    pub(super) direction: Direction,
    pub(super) expire_at: Option<i64>,
    /// A rolling board's buckets and when the first leaves.
    pub(super) buckets: Vec<leaderboard_rules::rolling::Bucket>,
    pub(super) next_expiry: Option<i64>,
}

impl Stored {
    pub(super) fn key(&self, player: &str) -> RankKey {
        self.standing.key(player)
    }

    pub(super) fn entry(&self, board: &LeaderboardId, player: &str) -> IndexEntry {
        IndexEntry::standing(
            board,
            self.direction,
            player,
            &self.standing,
            self.expire_at,
        )
    }
}

/// What a row keeps beside its standing or tombstone.
pub(super) struct KeptRow {
    pub(super) rev: u64,
    pub(super) receipts: Vec<KeptReceipt>,
    pub(super) archived_until: Option<i64>,
}

#[derive(Default)]
pub(super) struct Tables {
    pub(super) boards: BTreeMap<LeaderboardId, Board>,
    pub(super) families: BTreeMap<(String, String), Family>,
    pub(super) standings: BTreeMap<(LeaderboardId, String), Stored>,
    /// Tombstones of removed standings: version, direction, index expiry.
    pub(super) removed: BTreeMap<(LeaderboardId, String), (u64, Direction, Option<i64>)>,
    /// Bans: (game, player) -> the ban.
    pub(super) bans: BTreeMap<(String, String), crate::store::Ban>,
    /// The audit trail by record id (ids order by time).
    pub(super) audit: BTreeMap<String, crate::store::AuditRecord>,
    /// Receipts that left their rows, by (board, player, match).
    pub(super) receipts: HashMap<(LeaderboardId, String, String), Receipt>,
    /// What each row keeps beside its standing or tombstone: revision, receipts and
    /// until when its archived receipts may answer.
    pub(super) kept: HashMap<(LeaderboardId, String), KeptRow>,
    pub(super) checkpoints: HashMap<LeaderboardId, Checkpoint>,
    pub(super) sketches: HashMap<LeaderboardId, RankSketch>,
    /// Sealing progress by board.
    pub(super) seals: HashMap<LeaderboardId, crate::store::SealState>,
    /// Exports by (board, id).
    pub(super) exports: BTreeMap<(LeaderboardId, String), crate::store::ExportJob>,
    /// Players' rewards by (player, reward id).
    pub(super) rewards: BTreeMap<(String, String), crate::store::Reward>,
    /// Sealed results by board.
    pub(super) results: HashMap<LeaderboardId, crate::store::Results>,
    /// Event sources' mappings by (source, version).
    pub(super) mappings: BTreeMap<(String, u64), leaderboard_rules::mapping::Mapping>,
    /// Profiles by player.
    pub(super) profiles: HashMap<String, crate::store::StoredProfile>,
    /// Tournaments by id.
    pub(super) tournaments: BTreeMap<String, leaderboard_rules::tournament::Tournament>,
    /// Occurrences' memberships by (occurrence board, player).
    pub(super) members: HashMap<(LeaderboardId, String), leaderboard_rules::tournament::Member>,
    /// Occurrences' seat counters (joins while the hints are away).
    pub(super) seat_counters: HashMap<LeaderboardId, u64>,
    /// League standings by (tournament, player).
    pub(super) leagues: HashMap<(String, String), leaderboard_rules::league::LeagueStanding>,
    /// Occurrences' seats by (occurrence board, seat): the player holding it.
    pub(super) seats: BTreeMap<(LeaderboardId, u64), String>,
    /// History rows by (player, board).
    pub(super) history: BTreeMap<(String, LeaderboardId), crate::store::HistoryRow>,
    /// The review queue by (game, queue key).
    pub(super) held: BTreeMap<(String, String), crate::store::HeldResult>,
    /// Rejected results by (game, player).
    pub(super) rejections: HashMap<(String, String), std::collections::BTreeSet<String>>,
    /// The operators' decisions by (game, player, match): approved or not.
    pub(super) decisions: HashMap<(String, String, String), bool>,
    /// The stream: every standing written, oldest first; record `i` has sequence number
    /// `i + 1`.
    pub stream: Vec<IndexEntry>,
    /// Records before this sequence number are trimmed (as after 24 hours).
    pub trimmed_before: usize,
}

impl Tables {
    /// The board as stored, to mark it sealed.
    pub(super) fn board_mut(&mut self, lb: &LeaderboardId) -> Option<&mut Board> {
        self.boards.get_mut(lb)
    }

    pub(super) fn keys(&self, lb: &LeaderboardId, dir: Direction) -> Vec<RankKey> {
        let mut keys: Vec<RankKey> = self
            .standings
            .range((lb.clone(), String::new())..)
            .take_while(|((b, _), _)| b == lb)
            .map(|((_, p), s)| s.key(p))
            .collect();
        keys.sort_by(|a, b| a.cmp_in(b, dir));
        keys
    }
}

/// Which write shard a player's standing is on.
pub(super) fn shard_of(player: &str) -> u64 {
    player.bytes().map(u64::from).sum::<u64>() % MEMORY_SHARDS
}

/// The in-memory [`crate::store::ScoreStore`] (and [`crate::store::StreamSource`] over
/// its own stream). [`MemoryStore::set_down`] makes every call fail as an unreachable
/// DynamoDB does.
#[derive(Default)]
pub struct MemoryStore {
    pub(super) tables: Mutex<Tables>,
    pub(super) down: AtomicBool,
}

impl MemoryStore {
    /// While `down`, every call fails.
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Moves the end of `lb`'s window to `end`, as if the clock had jumped: a test closes
    /// a window when its writes are in, however long they took. No-op for a board
    /// without a window or that does not exist.
    pub fn set_window_end(&self, lb: &LeaderboardId, end: i64) {
        let mut tables = lock(&self.tables);
        if let Some(w) = tables.boards.get_mut(lb).and_then(|b| b.window.as_mut()) {
            w.window.end = Some(end);
        }
    }

    /// Runs `f` on the tables, unless down.
    pub(super) fn with<T>(&self, f: impl FnOnce(&mut Tables) -> T) -> Result<T, StoreError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(store_outage());
        }
        Ok(f(&mut lock(&self.tables)))
    }
}

impl BoardStore for MemoryStore {
    async fn get_board(&self, lb: &LeaderboardId) -> Result<Option<Board>, StoreError> {
        self.with(|t| t.boards.get(lb).cloned())
    }

    async fn create_board(&self, board: &Board) -> Result<Option<Board>, StoreError> {
        self.with(|t| match t.boards.get(&board.leaderboard_id) {
            Some(existing) => Some(existing.clone()),
            None => {
                t.boards.insert(board.leaderboard_id.clone(), board.clone());
                None
            }
        })
    }

    async fn set_status(
        &self,
        lb: &LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    ) -> Result<bool, StoreError> {
        self.with(|t| match t.boards.get_mut(lb) {
            Some(b) if b.status == from => {
                b.status = to;
                true
            }
            _ => false,
        })
    }

    async fn set_integrity(
        &self,
        lb: &LeaderboardId,
        rules: Option<&Integrity>,
    ) -> Result<bool, StoreError> {
        self.with(|t| {
            t.boards
                .get_mut(lb)
                .map(|b| b.integrity = rules.cloned())
                .is_some()
        })
    }

    async fn set_rewards(
        &self,
        lb: &LeaderboardId,
        table: Option<&RewardTable>,
    ) -> Result<bool, StoreError> {
        self.with(|t| {
            (t.boards.get_mut(lb))
                .map(|b| b.rewards = table.cloned())
                .is_some()
        })
    }

    async fn set_family_rewards(
        &self,
        family: &Family,
        table: Option<&RewardTable>,
    ) -> Result<bool, StoreError> {
        let key = (family.game.clone(), family.mode.clone());
        self.with(|t| {
            (t.families.get_mut(&key))
                .map(|f| f.rewards = table.cloned())
                .is_some()
        })
    }

    async fn set_reset(&self, lb: &LeaderboardId, reset: &BoardReset) -> Result<bool, StoreError> {
        self.with(|t| match t.boards.get_mut(lb) {
            Some(b) if reset.may_replace(b.reset.as_ref()) => {
                b.reset = Some(reset.clone());
                true
            }
            _ => false,
        })
    }

    async fn set_family_integrity(
        &self,
        family: &Family,
        rules: Option<&Integrity>,
    ) -> Result<bool, StoreError> {
        let key = (family.game.clone(), family.mode.clone());
        self.with(|t| {
            t.families
                .get_mut(&key)
                .map(|f| f.integrity = rules.cloned())
                .is_some()
        })
    }

    async fn list_boards(&self, prefix: &str, page: Paging<'_>) -> Result<BoardPage, StoreError> {
        let Paging { after, limit } = page;
        self.with(|t| {
            let listed: Vec<(String, Board)> = t
                .boards
                .values()
                .map(|b| (b.list_key(), b.clone()))
                .filter(|(k, _)| k.starts_with(prefix) && after.is_none_or(|a| k.as_str() > a))
                .collect();
            let (boards, next) = first_page(listed, limit);
            BoardPage { boards, next }
        })
    }

    async fn get_family(&self, game: &str, mode: &str) -> Result<Option<Family>, StoreError> {
        self.with(|t| t.families.get(&(game.to_owned(), mode.to_owned())).cloned())
    }

    async fn create_family(&self, family: &Family) -> Result<Option<Family>, StoreError> {
        let key = (family.game.clone(), family.mode.clone());
        self.with(|t| match t.families.get(&key) {
            Some(existing) => Some(existing.clone()),
            None => {
                t.families.insert(key, family.clone());
                None
            }
        })
    }

    async fn list_families(&self, page: Paging<'_>) -> Result<FamilyPage, StoreError> {
        let Paging { after, limit } = page;
        self.with(|t| {
            let listed: Vec<(String, Family)> = (t.families.values())
                .map(|f| (format!("{}#{}", f.game, f.mode), f.clone()))
                .filter(|(k, _)| after.is_none_or(|a| k.as_str() > a))
                .collect();
            let (families, next) = first_page(listed, limit);
            FamilyPage { families, next }
        })
    }
}

/// The first `limit` of `listed` in key order, and the last key of the page when more
/// follow (the next page's `after`).
fn first_page<T>(mut listed: Vec<(String, T)>, limit: u32) -> (Vec<T>, Option<String>) {
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    let more = listed.len() > limit as usize;
    listed.truncate(limit as usize);
    let next = listed.last().filter(|_| more).map(|(k, _)| k.clone());
    (listed.into_iter().map(|(_, v)| v).collect(), next)
}
