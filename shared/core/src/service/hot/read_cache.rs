//! A short-TTL cache of whole replies with single-flight loading.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use crate::service::ttl_cache::lock;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

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
}
