//! [`MemoryStore`]'s reads in rank order, the rebuild's shard pages and checkpoints, and
//! rank sketches.

use super::store::{MEMORY_SHARDS, MemoryStore, shard_of};
use crate::store::StoreError;
use crate::store::{
    Checkpoint, Count, IndexEntry, RankSketch, RankedReads, RebuildStore, SketchStore,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, RankKey, position_after, position_before};
use leaderboard_rules::page::Paging;

impl MemoryStore {
    /// The board's standings in rank order strictly after `after` (from the top when
    /// `None`), those `keep` takes, at most `limit`.
    fn walk_after(
        &self,
        on: BoardOrder<'_>,
        after: Option<&RankKey>,
        keep: impl Fn(&RankKey) -> bool,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.with(|t| {
            let keys = t.keys(on.lb, on.dir);
            let pos = after.map_or(0, |a| position_after(&keys, on.dir, a));
            let kept = keys.into_iter().skip(pos).filter(|k| keep(k));
            kept.take(limit as usize).collect()
        })
    }
}

impl RankedReads for MemoryStore {
    async fn ranked_after(
        &self,
        on: BoardOrder<'_>,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.walk_after(on, after, |_| true, limit)
    }

    async fn shard_after(
        &self,
        on: BoardOrder<'_>,
        shard: u64,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.walk_after(on, after, |k| shard_of(&k.player) == shard, limit)
    }

    async fn ranked_before(
        &self,
        on: BoardOrder<'_>,
        before: &RankKey,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        let BoardOrder { lb, dir } = on;
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
        on: BoardOrder<'_>,
        before: Option<&RankKey>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        let BoardOrder { lb, dir } = on;
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
        page: Paging<'_>,
    ) -> Result<(Vec<IndexEntry>, Option<String>), StoreError> {
        let Paging { after, limit } = page;
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
