//! [`LiveViews`] on [`MemoryIndex`], with the Redis keys' contracts (watch expiry, a
//! gate held for its gap), and [`MemoryBroadcasts`], a [`Broadcaster`] that keeps what
//! it was given.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::MemoryIndex;
use crate::service::ttl_cache::lock;
use crate::store::IndexError;
use crate::store::{BroadcastError, Broadcaster, Claim, LiveViews};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::live::Published;
use leaderboard_rules::order::{BoardOrder, Direction};

type Key = (LeaderboardId, String);

/// The live views' state of every board.
#[derive(Default)]
pub(crate) struct LiveState {
    watched: HashMap<Key, i64>,
    boards: HashMap<LeaderboardId, (Direction, i64)>,
    pushes: HashMap<Key, Published>,
    gates: HashMap<Key, Instant>,
}

fn key(lb: &LeaderboardId, view: &str) -> Key {
    (lb.clone(), view.to_owned())
}

impl LiveViews for MemoryIndex {
    async fn watch(
        &self,
        on: BoardOrder<'_>,
        view_id: &str,
        until_ms: i64,
    ) -> Result<(), IndexError> {
        let BoardOrder { lb, dir } = on;
        self.up()?;
        let mut live = lock(&self.live);
        live.watched.insert(key(lb, view_id), until_ms);
        let listed = live.boards.entry(lb.clone()).or_insert((dir, until_ms));
        listed.1 = listed.1.max(until_ms);
        Ok(())
    }

    async fn watched_boards(
        &self,
        now_ms: i64,
    ) -> Result<Vec<(LeaderboardId, Direction)>, IndexError> {
        self.up()?;
        let mut live = lock(&self.live);
        live.boards.retain(|_, (_, until)| *until >= now_ms);
        let mut boards: Vec<_> = live
            .boards
            .iter()
            .map(|(lb, (dir, _))| (lb.clone(), *dir))
            .collect();
        boards.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
        Ok(boards)
    }

    async fn watched(&self, lb: &LeaderboardId, now_ms: i64) -> Result<Vec<String>, IndexError> {
        self.up()?;
        let mut live = lock(&self.live);
        live.watched.retain(|_, until| *until >= now_ms);
        let mut views: Vec<String> = live
            .watched
            .keys()
            .filter(|(board, _)| board == lb)
            .map(|(_, view)| view.clone())
            .collect();
        views.sort();
        Ok(views)
    }

    async fn last_push(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
    ) -> Result<Option<Published>, IndexError> {
        self.up()?;
        Ok(lock(&self.live).pushes.get(&key(lb, view_id)).cloned())
    }

    async fn claim(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        gap: Duration,
    ) -> Result<Claim, IndexError> {
        self.up()?;
        let mut live = lock(&self.live);
        let k = key(lb, view_id);
        let now = Instant::now();
        if let Some(until) = live.gates.get(&k).filter(|until| **until > now) {
            return Ok(Claim::Wait(*until - now));
        }
        live.gates.insert(k.clone(), now + gap);
        Ok(Claim::Granted(live.pushes.get(&k).cloned()))
    }

    async fn record(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        push: &Published,
    ) -> Result<(), IndexError> {
        self.up()?;
        lock(&self.live)
            .pushes
            .insert(key(lb, view_id), push.clone());
        Ok(())
    }

    async fn release(&self, lb: &LeaderboardId, view_id: &str) -> Result<(), IndexError> {
        self.up()?;
        lock(&self.live).gates.remove(&key(lb, view_id));
        Ok(())
    }
}

/// A [`Broadcaster`] that keeps every publish (channel, event) in order;
/// [`MemoryBroadcasts::set_down`] makes it refuse them.
#[derive(Default)]
pub struct MemoryBroadcasts {
    sent: Mutex<Vec<(String, String)>>,
    down: AtomicBool,
}

impl MemoryBroadcasts {
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// Every publish so far.
    pub fn sent(&self) -> Vec<(String, String)> {
        lock(&self.sent).clone()
    }
}

impl Broadcaster for MemoryBroadcasts {
    async fn publish(&self, channel: &str, event: String) -> Result<(), BroadcastError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(BroadcastError::Unreachable("down".into()));
        }
        lock(&self.sent).push((channel.to_owned(), event));
        Ok(())
    }
}
