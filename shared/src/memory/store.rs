//! [`MemoryStore`]: the source of truth in memory, with DynamoDB's contracts: create-if-
//! absent boards and families, conditional status changes, a commit that writes a
//! player's row (standing and receipts) only if it is unchanged since read, rank-ordered reads and capped
//! counts, shard pages for the rebuild, and the table's stream (every standing written,
//! in order) for the projector and the repair.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::store_outage;
use crate::board::{Board, BoardStatus, Standing};
use crate::family::Family;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey, position_after, position_before};
use crate::store::{
    BoardPage, BoardStore, Checkpoint, Commit, CommitOutcome, Consistency, Count, EntryKind,
    IndexEntry, KeptReceipt, RankSketch, RankedReads, RebuildStore, Receipt, Removal, Roll, Row,
    SketchStore, StandingStore,
};
use crate::store::{FamilyPage, StoreError};
use crate::ttl_cache::lock;

/// Write shards a board's standings are spread over here (few, but more than one, so
/// the rebuild's walk over shards is exercised).
pub const MEMORY_SHARDS: u64 = 4;

/// A standing as stored: with its board's direction and index expiry, as the table's
/// standing items carry them.
#[derive(Clone)]
struct Stored {
    standing: Standing,
    direction: Direction,
    expire_at: Option<i64>,
    /// A rolling board's buckets and when the first leaves.
    buckets: Vec<crate::rolling::Bucket>,
    next_expiry: Option<i64>,
}

impl Stored {
    fn key(&self, player: &str) -> RankKey {
        self.standing.key(player)
    }

    fn entry(&self, board: &LeaderboardId, player: &str) -> IndexEntry {
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
struct KeptRow {
    rev: u64,
    receipts: Vec<KeptReceipt>,
    archived_until: Option<i64>,
}

#[derive(Default)]
pub(super) struct Tables {
    boards: BTreeMap<LeaderboardId, Board>,
    families: BTreeMap<(String, String), Family>,
    standings: BTreeMap<(LeaderboardId, String), Stored>,
    /// Tombstones of removed standings: version, direction, index expiry.
    removed: BTreeMap<(LeaderboardId, String), (u64, Direction, Option<i64>)>,
    /// Bans: (game, player) -> the ban.
    pub(super) bans: BTreeMap<(String, String), crate::store::Ban>,
    /// The audit trail by record id (ids order by time).
    pub(super) audit: BTreeMap<String, crate::store::AuditRecord>,
    /// Receipts that left their rows, by (board, player, match).
    receipts: HashMap<(LeaderboardId, String, String), Receipt>,
    /// What each row keeps beside its standing or tombstone: revision, receipts and
    /// until when its archived receipts may answer.
    kept: HashMap<(LeaderboardId, String), KeptRow>,
    checkpoints: HashMap<LeaderboardId, Checkpoint>,
    sketches: HashMap<LeaderboardId, RankSketch>,
    /// Sealing progress by board.
    pub(super) seals: HashMap<LeaderboardId, crate::store::SealState>,
    /// Sealed results by board.
    pub(super) results: HashMap<LeaderboardId, crate::store::Results>,
    /// Event sources' mappings by (source, version).
    pub(super) mappings: BTreeMap<(String, u64), crate::mapping::Mapping>,
    /// Profiles by player.
    pub(super) profiles: HashMap<String, crate::store::StoredProfile>,
    /// Tournaments by id.
    pub(super) tournaments: BTreeMap<String, crate::tournament::Tournament>,
    /// Occurrences' memberships by (occurrence board, player).
    pub(super) members: HashMap<(LeaderboardId, String), crate::tournament::Member>,
    /// Occurrences' seat counters (joins while the hints are away).
    pub(super) seat_counters: HashMap<LeaderboardId, u64>,
    /// League standings by (tournament, player).
    pub(super) leagues: HashMap<(String, String), crate::league::LeagueStanding>,
    /// Occurrences' seats by (occurrence board, seat): the player holding it.
    pub(super) seats: BTreeMap<(LeaderboardId, u64), String>,
    /// History rows by (player, board).
    pub(super) history: BTreeMap<(String, LeaderboardId), crate::store::HistoryRow>,
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

    fn keys(&self, lb: &LeaderboardId, dir: Direction) -> Vec<RankKey> {
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
fn shard_of(player: &str) -> u64 {
    player.bytes().map(u64::from).sum::<u64>() % MEMORY_SHARDS
}

/// The in-memory [`crate::store::ScoreStore`] (and [`crate::store::StreamSource`] over
/// its own stream). [`MemoryStore::set_down`] makes every call fail as an unreachable
/// DynamoDB does.
#[derive(Default)]
pub struct MemoryStore {
    pub(super) tables: Mutex<Tables>,
    down: AtomicBool,
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

    async fn list_boards(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<BoardPage, StoreError> {
        self.with(|t| {
            let mut listed: Vec<(String, Board)> = t
                .boards
                .values()
                .map(|b| (b.list_key(), b.clone()))
                .filter(|(k, _)| k.starts_with(prefix) && after.is_none_or(|a| k.as_str() > a))
                .collect();
            listed.sort_by(|a, b| a.0.cmp(&b.0));
            let more = listed.len() > limit as usize;
            listed.truncate(limit as usize);
            BoardPage {
                next: listed.last().filter(|_| more).map(|(k, _)| k.clone()),
                boards: listed.into_iter().map(|(_, b)| b).collect(),
            }
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

    async fn list_families(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> Result<FamilyPage, StoreError> {
        self.with(|t| {
            let mut listed: Vec<(String, Family)> = (t.families.values())
                .map(|f| (format!("{}#{}", f.game, f.mode), f.clone()))
                .filter(|(k, _)| after.is_none_or(|a| k.as_str() > a))
                .collect();
            listed.sort_by(|a, b| a.0.cmp(&b.0));
            let more = listed.len() > limit as usize;
            listed.truncate(limit as usize);
            FamilyPage {
                next: listed.last().filter(|_| more).map(|(k, _)| k.clone()),
                families: listed.into_iter().map(|(_, f)| f).collect(),
            }
        })
    }
}

impl Tables {
    /// Whether the row is still as `row` was read (its revision; the twin's rows always
    /// have one once written).
    fn unchanged(&self, key: &(LeaderboardId, String), row: &Row) -> bool {
        let rev = self.kept.get(key).map(|k| k.rev);
        rev == row.rev && self.row_version(key) == row.version
    }

    /// The version of the player's row: their standing's or their tombstone's.
    fn row_version(&self, key: &(LeaderboardId, String)) -> Option<u64> {
        (self.standings.get(key).map(|s| s.standing.version))
            .or_else(|| self.removed.get(key).map(|r| r.0))
    }

    /// Every row of the board (standings and tombstones) as index entries, by player.
    fn rows(&self, lb: &LeaderboardId) -> Vec<IndexEntry> {
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
    ) -> Result<Vec<Option<crate::profile::Metadata>>, StoreError> {
        let mut out = Vec::with_capacity(rows.len());
        for (lb, p) in rows {
            out.push(self.get_standing(lb, p).await?.and_then(|s| s.metadata));
        }
        Ok(out)
    }

    async fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<Option<Standing>, StoreError> {
        Ok(self
            .get_row(lb, player, Consistency::Strong)
            .await?
            .standing)
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
            let stored = Stored {
                standing: c.standing.clone(),
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
                .map(|(_, p)| PlayerId::parse(&p).map_err(|e| StoreError::sdk("expiring", e)))
                .collect::<Result<Vec<_>, _>>()
        })?
    }
}

impl RankedReads for MemoryStore {
    async fn ranked_after(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.with(|t| {
            let keys = t.keys(lb, dir);
            let pos = after.map_or(0, |a| position_after(&keys, dir, a));
            keys.into_iter().skip(pos).take(limit as usize).collect()
        })
    }

    async fn shard_after(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        shard: u64,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.with(|t| {
            let keys = t.keys(lb, dir);
            let pos = after.map_or(0, |a| position_after(&keys, dir, a));
            keys.into_iter()
                .skip(pos)
                .filter(|k| shard_of(&k.player) == shard)
                .take(limit as usize)
                .collect()
        })
    }

    async fn ranked_before(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        before: &RankKey,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.with(|t| {
            let keys = t.keys(lb, dir);
            let end = position_before(&keys, dir, before);
            keys[end.saturating_sub(limit as usize)..end].to_vec()
        })
    }

    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, StoreError> {
        self.with(|t| {
            players
                .iter()
                .map(|p| {
                    let key = (lb.clone(), p.to_string());
                    t.standings.get(&key).map(|s| s.key(p.as_str()))
                })
                .collect()
        })
    }

    async fn count_before(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        before: Option<&RankKey>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        self.with(|t| {
            let keys = t.keys(lb, dir);
            let n = match before {
                Some(b) => position_before(&keys, dir, b),
                None => keys.len(),
            } as u64;
            Count {
                n: n.min(cap),
                exact: n <= cap,
            }
        })
    }
}

impl RebuildStore for MemoryStore {
    fn shard_count(&self) -> u64 {
        MEMORY_SHARDS
    }

    async fn standings_page(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<IndexEntry>, Option<String>), StoreError> {
        self.with(|t| {
            let mut page: Vec<IndexEntry> = t
                .rows(lb)
                .into_iter()
                .filter(|e| {
                    let p = e.key.player.as_str();
                    shard_of(p) == shard && after.is_none_or(|a| p > a)
                })
                .take(limit as usize + 1)
                .collect();
            let more = page.len() > limit as usize;
            page.truncate(limit as usize);
            let next = page.last().filter(|_| more).map(|e| e.key.player.clone());
            (page, next)
        })
    }

    async fn get_checkpoint(&self, lb: &LeaderboardId) -> Result<Option<Checkpoint>, StoreError> {
        self.with(|t| t.checkpoints.get(lb).cloned())
    }

    async fn put_checkpoint(&self, lb: &LeaderboardId, cp: &Checkpoint) -> Result<(), StoreError> {
        self.with(|t| {
            t.checkpoints.insert(lb.clone(), cp.clone());
        })
    }

    async fn delete_checkpoint(&self, lb: &LeaderboardId) -> Result<(), StoreError> {
        self.with(|t| {
            t.checkpoints.remove(lb);
        })
    }
}

impl SketchStore for MemoryStore {
    async fn get_sketch(&self, lb: &LeaderboardId) -> Result<Option<RankSketch>, StoreError> {
        self.with(|t| t.sketches.get(lb).cloned())
    }

    async fn put_sketch(&self, lb: &LeaderboardId, sketch: &RankSketch) -> Result<(), StoreError> {
        self.with(|t| {
            t.sketches.insert(lb.clone(), sketch.clone());
        })
    }
}
