//! One board's keys in the in-memory index: the marker's state, the live and the
//! rebuild's standings, and the top-window version, with the apply rule of the scripts.

use std::collections::HashMap;

use crate::store::IndexError;
use crate::store::{EntryKind, Health, IndexEntry, TOP_WINDOW};
use leaderboard_rules::order::{Direction, RankKey};

/// Standings by player: version and key.
pub(super) type Keys = HashMap<String, (u64, RankKey)>;

/// Removed players' tombstones: player -> the removal's version.
pub(super) type Tombs = HashMap<String, u64>;

/// One board's keys: the marker's state (`None`: no marker), the live and the rebuild's
/// standings, the running rebuild's generation and the top-window version.
#[derive(Default)]
pub(super) struct Board {
    pub state: Option<Health>,
    pub gen_id: Option<String>,
    pub live: Keys,
    pub rebuild: Keys,
    /// Kept through rebuilds, like the script's `x` hash.
    pub tombs: Tombs,
    pub window_version: u64,
    /// The board's clock in microseconds, as the scripts' `TIME`; it moves on at every
    /// change and read, so no two share a tick.
    pub clock: i64,
    /// When each live entry took its place, on `clock` (the hash values' stamps).
    pub stamps: HashMap<String, i64>,
}

impl Board {
    pub(super) fn health(&self) -> Health {
        self.state.unwrap_or(Health::Missing)
    }

    pub(super) fn ready(&self) -> Result<(), IndexError> {
        match self.health() {
            Health::Ready => Ok(()),
            other => Err(IndexError::NotReady(other)),
        }
    }

    /// Moves the board's clock on and reads it.
    pub(super) fn tick(&mut self) -> i64 {
        self.clock = leaderboard_rules::time::now_us().max(self.clock + 1);
        self.clock
    }

    /// When the live entry of `player` took its place (0: unknown, long ago).
    pub(super) fn stamp(&self, player: &str) -> i64 {
        self.stamps.get(player).copied().unwrap_or(0)
    }

    /// The live standings in rank order.
    pub(super) fn ranked(&self, dir: Direction) -> Vec<RankKey> {
        let mut keys: Vec<RankKey> = self.live.values().map(|(_, k)| k.clone()).collect();
        keys.sort_by(|a, b| a.cmp_in(b, dir));
        keys
    }

    pub(super) fn rank_of(&self, dir: Direction, player: &str) -> Option<u64> {
        let (_, key) = self.live.get(player)?;
        let ranked = self.ranked(dir);
        ranked.iter().position(|k| k == key).map(|i| i as u64)
    }

    /// Applies `e` to the live keys (and a running rebuild's) if its version is newer;
    /// the top-window version moves when the old or the new place is inside the window.
    pub(super) fn apply(&mut self, e: &IndexEntry) -> bool {
        let player = &e.key.player;
        let before = self.rank_of(e.direction, player);
        let old_key = self.live.get(player).map(|(_, k)| k.clone());
        let applied = put(&mut self.live, &mut self.tombs, e);
        let new_key = self.live.get(player).map(|(_, k)| k.clone());
        if new_key.is_some() && new_key != old_key {
            let now = self.tick();
            self.stamps.insert(player.clone(), now);
        }
        if self.state == Some(Health::Rebuilding) {
            put(&mut self.rebuild, &mut self.tombs, e);
        }
        if !applied {
            return false;
        }
        let after = self.rank_of(e.direction, player);
        let inside = |r: Option<u64>| r.is_some_and(|r| r < TOP_WINDOW);
        if inside(before) || inside(after) {
            self.window_version += 1;
        }
        true
    }
}

/// Applies `e` to `keys` if it is newer than what they hold for its player (and, for a
/// player not in them, than their tombstone): a standing is put, a removal takes the
/// player out and leaves a tombstone, an erasure takes them out and forgets them.
pub(super) fn put(keys: &mut Keys, tombs: &mut Tombs, e: &IndexEntry) -> bool {
    let player = &e.key.player;
    let current = keys.get(player).map(|(v, _)| *v);
    let tomb = tombs.get(player).copied();
    match e.kind {
        EntryKind::Standing => {
            if current.or(tomb).is_some_and(|v| v >= e.version) {
                return false;
            }
            keys.insert(player.clone(), (e.version, e.key.clone()));
            tombs.remove(player);
        }
        EntryKind::Removed => {
            if current.is_some_and(|v| v > e.version)
                || (current.is_none() && tomb.is_some_and(|t| t >= e.version))
            {
                return false;
            }
            keys.remove(player);
            if tomb.is_none_or(|t| t < e.version) {
                tombs.insert(player.clone(), e.version);
            }
        }
        EntryKind::Erased => {
            if current.is_some_and(|v| v > e.version) {
                return false;
            }
            keys.remove(player);
            tombs.remove(player);
        }
    }
    true
}
