//! Per-container caches' building blocks: a map whose entries are trusted for a fixed
//! time ([`TtlCache`], used for board and family definitions and the reads' last-known
//! answers), and the poison-tolerant lock every such map is guarded by.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Locks `m`, ignoring poisoning: a panic while holding one of these locks cannot leave
/// a cache map inconsistent (each operation is one insert, remove or retain).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A small map whose entries are trusted for a fixed time, with a bound on its size.
pub struct TtlCache<K, V> {
    ttl: Duration,
    max_entries: usize,
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration) -> Self {
        Self::bounded(ttl, 100_000)
    }

    /// At most `max_entries`: inserting past it drops the expired entries, or all of
    /// them if none has expired (a cache, not a store).
    pub fn bounded(ttl: Duration, max_entries: usize) -> Self {
        Self {
            ttl,
            max_entries,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        self.get_any(key)
            .filter(|(_, fresh)| *fresh)
            .map(|(v, _)| v)
    }

    /// The entry even if expired, and whether it is still fresh.
    pub fn get_any(&self, key: &K) -> Option<(V, bool)> {
        let entries = self.lock();
        let (value, at) = entries.get(key)?;
        Some((value.clone(), at.elapsed() < self.ttl))
    }

    /// What `f` reads of the entry, fresh or not, without copying the entry.
    pub fn peek<T>(&self, key: &K, f: impl FnOnce(&V) -> T) -> Option<T> {
        self.lock().get(key).map(|(value, _)| f(value))
    }

    pub fn put(&self, key: K, value: V) {
        let mut entries = self.lock();
        if entries.len() >= self.max_entries {
            let ttl = self.ttl;
            entries.retain(|_, (_, at)| at.elapsed() < ttl);
            if entries.len() >= self.max_entries {
                entries.clear();
            }
        }
        entries.insert(key, (value, Instant::now()));
    }

    pub fn forget(&self, key: &K) {
        self.lock().remove(key);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<K, (V, Instant)>> {
        lock(&self.entries)
    }
}
