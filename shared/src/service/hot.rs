//! Hot-spot protection for reads (DESIGN 6): what keeps a hot board or a celebrity
//! player cheap.
//!
//! - [`ReadCache`]: a short-TTL per-container cache of whole replies with single-flight
//!   coalescing: identical reads arriving together share one load, and the answer is
//!   reused until the TTL (`READ_CACHE_TTL_MS`, default 250 ms) runs out, so N identical
//!   reads cost one index call per TTL. A player's reads of their own rank and friends
//!   bypass it, so their own write shows in their next read.
//! - [`TopWindows`]: each container's copy of a board's top [`TOP_WINDOW`] places with
//!   the version it was read at. Every apply that lands inside the window moves the
//!   version on (in the same script), so a top read asks only "still version v?" and
//!   gets the entries back only when they changed.
//! - [`RateLimits`]: per-player and per-IP fixed-window limits counted in Redis, shared
//!   by every container; over the limit is a 429 with `Retry-After`. Only reads are
//!   limited: results posted by game servers are never dropped by a limiter.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;
use tracing::warn;

use crate::caller::Caller;
use crate::error::{IndexError, ServiceError};
use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey};
use crate::store::{RankIndex, RateCounter, TOP_WINDOW};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the map inconsistent.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One key's load: started at `Instant`, shared by everyone who asks before the TTL ends.
type Slot<V> = (Instant, Arc<OnceCell<V>>);

/// Replies by request key, each reused for `ttl` after its load started; concurrent
/// requests for a key wait for the one load in flight instead of starting their own.
/// Only successful loads are kept. A zero TTL turns the cache off.
pub struct ReadCache<V> {
    ttl: Duration,
    max_entries: usize,
    slots: Mutex<HashMap<String, Slot<V>>>,
}

impl<V: Clone> ReadCache<V> {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            max_entries: 50_000,
            slots: Mutex::new(HashMap::new()),
        }
    }

    /// The cached reply for `key`, or the result of `load` (run by one caller at a
    /// time per key). The flag is true when the reply came from the cache.
    pub async fn get_or_load<E, F, Fut>(&self, key: String, load: F) -> Result<(V, bool), E>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<V, E>>,
    {
        if self.ttl.is_zero() {
            return load().await.map(|v| (v, false));
        }
        let cell = self.slot(key);
        let mut loaded = false;
        let value = cell
            .get_or_try_init(|| {
                loaded = true;
                load()
            })
            .await?;
        Ok((value.clone(), !loaded))
    }

    fn slot(&self, key: String) -> Arc<OnceCell<V>> {
        let mut slots = lock(&self.slots);
        if let Some((at, cell)) = slots.get(&key)
            && at.elapsed() < self.ttl
        {
            return cell.clone();
        }
        if slots.len() >= self.max_entries {
            let ttl = self.ttl;
            slots.retain(|_, (at, _)| at.elapsed() < ttl);
        }
        let cell = Arc::new(OnceCell::new());
        slots.insert(key, (Instant::now(), cell.clone()));
        cell
    }
}

/// A board's top window as this container last read it.
struct Held {
    version: String,
    entries: Arc<Vec<RankKey>>,
}

/// The best `n` of a board, read through its top window.
pub struct WindowRead {
    /// The window (the first [`TOP_WINDOW`] places, fewer on a smaller board).
    pub entries: Arc<Vec<RankKey>>,
    /// The board's size.
    pub total: u64,
}

/// Boards whose top window a container holds at most (1,000 entries each).
const MAX_HELD_WINDOWS: usize = 256;

/// Each board's top window held by this container.
#[derive(Default)]
pub struct TopWindows {
    held: Mutex<HashMap<LeaderboardId, Held>>,
}

impl TopWindows {
    /// The board's current top window: one round trip that returns the entries only if
    /// they changed since this container last read them. `None` when another reader
    /// replaced the held copy meanwhile (the caller reads the index directly).
    pub async fn read<I: RankIndex>(
        &self,
        index: &I,
        lb: &LeaderboardId,
        dir: Direction,
    ) -> Result<Option<WindowRead>, IndexError> {
        let known = lock(&self.held).get(lb).map(|h| h.version.clone());
        let fresh = index.top_window(lb, dir, known.as_deref()).await?;
        let mut held = lock(&self.held);
        let entries = match fresh.entries {
            Some(entries) => {
                let entries = Arc::new(entries);
                // Bounded: a container serving many boards keeps the recent ones.
                if held.len() >= MAX_HELD_WINDOWS && !held.contains_key(lb) {
                    held.clear();
                }
                held.insert(
                    lb.clone(),
                    Held {
                        version: fresh.version,
                        entries: entries.clone(),
                    },
                );
                entries
            }
            None => match held.get(lb) {
                Some(h) if h.version == fresh.version => h.entries.clone(),
                _ => return Ok(None),
            },
        };
        Ok(Some(WindowRead {
            entries,
            total: fresh.total,
        }))
    }

    /// Whether a read of `limit` entries after `after` falls inside the window as held
    /// now (a hint: the read itself checks the version).
    pub fn covers(&self, lb: &LeaderboardId, dir: Direction, after: &RankKey, limit: u64) -> bool {
        lock(&self.held).get(lb).is_some_and(|h| {
            let len = h.entries.len() as u64;
            // A window shorter than TOP_WINDOW is the whole board.
            len < TOP_WINDOW || position_after(&h.entries, dir, after) as u64 + limit <= len
        })
    }
}

/// Index of the first entry of `entries` (in rank order) that ranks after `after`.
pub fn position_after(entries: &[RankKey], dir: Direction, after: &RankKey) -> usize {
    entries.partition_point(|e| e.cmp_in(after, dir) != std::cmp::Ordering::Greater)
}

/// Read limits per fixed window; 0 turns a limit off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimits {
    pub per_player: u64,
    pub per_ip: u64,
    pub window: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            per_player: 20,
            per_ip: 200,
            window: Duration::from_secs(1),
        }
    }
}

impl RateLimits {
    /// Counts one read by `caller` and refuses it when a limit is exceeded. When the
    /// counters cannot be reached the read goes ahead: the limiter protects the
    /// service, it must not become the reason reads fail.
    pub async fn check<C: RateCounter>(
        &self,
        counter: &C,
        caller: &Caller,
    ) -> Result<(), ServiceError> {
        let mut keys = Vec::with_capacity(2);
        let mut limits = Vec::with_capacity(2);
        if let (Some(p), true) = (&caller.player, self.per_player > 0) {
            keys.push(format!("p:{p}"));
            limits.push(self.per_player);
        }
        if let (Some(ip), true) = (&caller.ip, self.per_ip > 0) {
            keys.push(format!("ip:{ip}"));
            limits.push(self.per_ip);
        }
        if keys.is_empty() {
            return Ok(());
        }
        let counts = match counter.hit(&keys, self.window).await {
            Ok(c) => c,
            Err(error) => {
                warn!(%error, "rate-limit counters unavailable; letting the read through");
                return Ok(());
            }
        };
        let wait_ms = counts
            .iter()
            .zip(&limits)
            .filter(|((hits, _), limit)| hits > limit)
            .map(|((_, ttl_ms), _)| *ttl_ms)
            .max();
        match wait_ms {
            Some(ms) => Err(ServiceError::RateLimited {
                retry_after_s: ms.div_ceil(1000).max(1),
            }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use crate::order::test_key as key;

    #[tokio::test]
    async fn concurrent_identical_loads_share_one_call() {
        let cache = ReadCache::<u64>::new(Duration::from_secs(60));
        let calls = AtomicUsize::new(0);
        let load = || async {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(20)).await;
            Ok::<_, ()>(7)
        };
        let all = futures::future::join_all((0..100).map(|_| cache.get_or_load("k".into(), load)));
        let results = all.await;
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        assert!(results.iter().all(|r| r.as_ref().map(|(v, _)| *v) == Ok(7)));
        assert_eq!(
            results
                .iter()
                .filter(|r| matches!(r, Ok((_, false))))
                .count(),
            1
        );
    }

    #[tokio::test]
    async fn failed_loads_are_not_kept_and_ttl_expires() {
        let cache = ReadCache::<u64>::new(Duration::from_millis(30));
        let err: Result<(u64, bool), &str> = cache
            .get_or_load("k".into(), || async { Err("down") })
            .await;
        assert_eq!(err, Err("down"));
        let ok = cache
            .get_or_load("k".into(), || async { Ok::<_, ()>(1) })
            .await;
        assert_eq!(ok, Ok((1, false)));
        let hit = cache
            .get_or_load("k".into(), || async { Ok::<_, ()>(2) })
            .await;
        assert_eq!(hit, Ok((1, true)));
        tokio::time::sleep(Duration::from_millis(40)).await;
        let after = cache
            .get_or_load("k".into(), || async { Ok::<_, ()>(3) })
            .await;
        assert_eq!(after, Ok((3, false)));
    }

    #[tokio::test]
    async fn zero_ttl_always_loads() {
        let cache = ReadCache::<u64>::new(Duration::ZERO);
        for i in 0..3 {
            let r = cache
                .get_or_load("k".into(), || async move { Ok::<_, ()>(i) })
                .await;
            assert_eq!(r, Ok((i, false)));
        }
    }

    #[test]
    fn position_after_follows_rank_order() {
        let window: Vec<RankKey> = (0..5).map(|i| key(&format!("p{i}"), 100 - i)).collect();
        assert_eq!(position_after(&window, Direction::Desc, &key("p0", 100)), 1);
        assert_eq!(position_after(&window, Direction::Desc, &key("x", 97)), 4);
        assert_eq!(position_after(&window, Direction::Desc, &key("p4", 96)), 5);
        assert_eq!(position_after(&window, Direction::Desc, &key("a", 200)), 0);
    }
}
