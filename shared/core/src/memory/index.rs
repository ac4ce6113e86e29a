//! [`MemoryIndex`]: the rank index in memory, with the Redis scripts' contracts: a
//! marker per board (missing, `ok`, `rebuilding`, `stale`) that reads check first,
//! version-checked applies that also feed a running rebuild's keys, a rebuild that
//! resumes under the same generation and swaps in only if its marker survived, a top
//! window whose version moves when its places change, leases and repair claims.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::board::Board;
use super::outage;
use crate::service::ttl_cache::lock;
use crate::store::IndexError;
use crate::store::{
    Around, BatchApplied, Health, IndexEntry, IndexReads, IndexWrites, PageAt, Place, Placement,
    PlayerRow, PlayerRows, RateCounter, RowCards, RowMetadata, Slice, TOP_WINDOW, TopWindow,
    VersionedCard,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{
    BoardOrder, Direction, RankKey, RankMode, Start, places, position_after, position_before,
};

/// The in-memory [`RankIndex`] (and [`RateCounter`]). [`MemoryIndex::set_down`] makes
/// every call fail as an unreachable Redis does; [`MemoryIndex::wipe`] and
/// [`MemoryIndex::mark`] stand for a flush and for a marker found stale.
#[derive(Default)]
pub struct MemoryIndex {
    pub(super) boards: Mutex<HashMap<LeaderboardId, Board>>,
    pub(super) leases: Mutex<HashMap<LeaderboardId, (String, Instant)>>,
    pub(super) claims: Mutex<HashMap<LeaderboardId, Instant>>,
    counters: Mutex<HashMap<String, (u64, Instant)>>,
    pub(super) live: Mutex<super::live::LiveState>,
    /// Players' card copies.
    pub(super) cards: Mutex<HashMap<PlayerId, VersionedCard>>,
    /// Tournament occurrences' seat hints.
    pub(super) seats: Mutex<HashMap<LeaderboardId, Seats>>,
    down: AtomicBool,
}

/// One occurrence's seat hints (`SeatHints`, in `tournaments`): seats handed out so far,
/// and seats given back.
#[derive(Default)]
pub(super) struct Seats {
    pub(super) next: u64,
    pub(super) given: std::collections::VecDeque<u64>,
}

impl MemoryIndex {
    /// While `down`, every call fails with an outage (a timeout).
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Forgets everything about the board (a flush, an empty restart).
    pub fn wipe(&self, lb: &LeaderboardId) {
        lock(&self.boards).remove(lb);
    }

    /// Forgets every card copy (a flush).
    pub fn wipe_cards(&self) {
        lock(&self.cards).clear();
    }

    /// Sets the board's marker as a fault would (e.g. [`Health::Stale`] after a failover).
    pub fn mark(&self, lb: &LeaderboardId, health: Health) {
        let mut boards = lock(&self.boards);
        let board = boards.entry(lb.clone()).or_default();
        board.state = (health != Health::Missing).then_some(health);
    }

    /// The live standings of the board, in rank order, whatever its marker says.
    pub fn snapshot(&self, lb: &LeaderboardId, dir: Direction) -> Vec<(u64, RankKey)> {
        let boards = lock(&self.boards);
        let Some(board) = boards.get(lb) else {
            return Vec::new();
        };
        let mut out: Vec<(u64, RankKey)> = board.live.values().cloned().collect();
        out.sort_by(|a, b| a.1.cmp_in(&b.1, dir));
        out
    }

    pub(super) fn up(&self) -> Result<(), IndexError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(outage());
        }
        Ok(())
    }

    /// Runs `f` on the board (created without a marker if unknown), unless down.
    pub(super) fn with<T>(
        &self,
        lb: &LeaderboardId,
        f: impl FnOnce(&mut Board) -> T,
    ) -> Result<T, IndexError> {
        self.up()?;
        let mut boards = lock(&self.boards);
        Ok(f(boards.entry(lb.clone()).or_default()))
    }
}

impl IndexWrites for MemoryIndex {
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        self.with(&entry.board, |b| {
            let applied = b.apply(entry);
            let total = b.live.len() as u64;
            Placement {
                applied,
                place: (b.rank_of(entry.direction, &entry.key.player)).map(|rank| Place {
                    rank: rank + 1,
                    total,
                }),
                health: b.health(),
            }
        })
    }

    async fn apply_many(&self, entries: &[IndexEntry]) -> Result<BatchApplied, IndexError> {
        self.up()?;
        let mut boards = lock(&self.boards);
        let mut out = BatchApplied::default();
        for e in entries {
            let board = boards.entry(e.board.clone()).or_default();
            out.applied.push(board.apply(e));
            let health = board.health();
            let known = out.unready.iter().any(|(lb, _)| lb == &e.board);
            if health != Health::Ready && !known {
                out.unready.push((e.board.clone(), health));
            }
        }
        Ok(out)
    }

    /// The twin places every rank mode from its entries, so `dense_ranks` changes
    /// nothing here.
    async fn init_board(
        &self,
        lb: &LeaderboardId,
        _: Option<i64>,
        _dense_ranks: bool,
    ) -> Result<(), IndexError> {
        self.with(lb, |b| {
            if b.state.is_none() {
                b.state = Some(Health::Ready);
            }
        })
    }
}

impl IndexReads for MemoryIndex {
    async fn around(
        &self,
        on: BoardOrder<'_>,
        player: &PlayerId,
        k: u64,
        mode: RankMode,
    ) -> Result<Option<Around>, IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let ranked = b.ranked(dir);
            let Some(r) = b.rank_of(dir, player.as_str()) else {
                return Ok(None);
            };
            let lo = r.saturating_sub(k);
            let hi = (r + k + 1).min(ranked.len() as u64);
            Ok(Some(Around {
                rank: r + 1,
                total: ranked.len() as u64,
                first_rank: lo + 1,
                first_place: places(mode, Start::TOP, &ranked)[lo as usize],
                entries: ranked[lo as usize..hi as usize].to_vec(),
                rank_approximate: false,
                total_approximate: false,
                cards: None,
                metadata: None,
            }))
        })?
    }

    async fn top_named(
        &self,
        on: BoardOrder<'_>,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64, RowCards, RowMetadata), IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let ranked = b.ranked(dir);
            let total = ranked.len() as u64;
            Ok((
                ranked.into_iter().take(n as usize).collect(),
                total,
                None,
                None,
            ))
        })?
    }

    async fn page(
        &self,
        on: BoardOrder<'_>,
        at: PageAt<'_>,
        limit: u64,
        mode: RankMode,
    ) -> Result<Slice, IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let ranked = b.ranked(dir);
            let (pos, count) = match at {
                PageAt::Top => (0, limit as usize),
                PageAt::After(a) => (position_after(&ranked, dir, a), limit as usize),
                PageAt::Before(k) => {
                    let stop = position_before(&ranked, dir, k);
                    let pos = stop.saturating_sub(limit as usize);
                    (pos, stop - pos)
                }
                PageAt::Rank(r) => (usize::try_from(r).unwrap_or(usize::MAX), limit as usize),
            };
            let entries: Vec<RankKey> = ranked.iter().skip(pos).take(count).cloned().collect();
            Ok(Slice {
                before: pos.min(ranked.len()) as u64,
                first_place: places(mode, Start::TOP, &ranked)
                    .get(pos)
                    .copied()
                    .unwrap_or(1),
                stamps: entries.iter().map(|k| b.stamp(&k.player)).collect(),
                entries,
                total: ranked.len() as u64,
                clock: b.tick(),
                cards: None,
                metadata: None,
            })
        })?
    }

    async fn rows_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
        mode: RankMode,
    ) -> Result<PlayerRows, IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let ranked = b.ranked(dir);
            let all_places = places(mode, Start::TOP, &ranked);
            let rows = players
                .iter()
                .filter_map(|p| {
                    let (_, key) = b.live.get(p.as_str())?;
                    let i = ranked.iter().position(|k| k == key)?;
                    Some(PlayerRow {
                        rank: i as u64 + 1,
                        place: all_places[i],
                        key: key.clone(),
                    })
                })
                .collect();
            Ok(PlayerRows {
                rows,
                total: ranked.len() as u64,
                cards: None,
                metadata: None,
            })
        })?
    }

    async fn keys_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
    ) -> Result<(Vec<Option<RankKey>>, RowMetadata), IndexError> {
        let BoardOrder { lb, dir: _ } = on;
        self.with(lb, |b| {
            b.ready()?;
            let keys = players
                .iter()
                .map(|p| b.live.get(p.as_str()).map(|(_, k)| k.clone()))
                .collect();
            Ok((keys, None))
        })?
    }

    async fn top_window(
        &self,
        on: BoardOrder<'_>,
        known: Option<&str>,
        _named: u64,
        _cards_held: bool,
    ) -> Result<TopWindow, IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let version = b.window_version.to_string();
            let ranked = b.ranked(dir);
            let total = ranked.len() as u64;
            let entries = (known != Some(version.as_str()))
                .then(|| ranked.into_iter().take(TOP_WINDOW as usize).collect());
            Ok(TopWindow {
                version,
                total,
                entries,
                clock: b.tick(),
                cards: None,
                metadata: None,
            })
        })?
    }

    async fn row_metadata(
        &self,
        _lb: &LeaderboardId,
        _players: &[PlayerId],
    ) -> Result<RowMetadata, IndexError> {
        self.up()?;
        Ok(None)
    }
}

impl RateCounter for MemoryIndex {
    async fn hit(&self, keys: &[String], window: Duration) -> Result<Vec<(u64, u64)>, IndexError> {
        self.up()?;
        let mut counters = lock(&self.counters);
        let now = Instant::now();
        Ok(keys
            .iter()
            .map(|k| {
                let c = counters.entry(k.clone()).or_insert((0, now + window));
                if c.1 <= now {
                    *c = (0, now + window);
                }
                c.0 += 1;
                (c.0, c.1.saturating_duration_since(now).as_millis() as u64)
            })
            .collect())
    }
}
