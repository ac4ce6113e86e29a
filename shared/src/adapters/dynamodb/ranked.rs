//! Reads in rank order straight from DynamoDB, through the sparse `by_rank` index
//! (`pk` = the standing's shard partition, `rk` = [`RankKey::sort_key`], keys only).
//!
//! Each read queries the 16 shards of the board in parallel and merges them. These
//! serve boards whose Redis keys have expired (closed windows) and reads while the rank
//! index is unavailable. Counts (a rank, a total) stop at a cap, so no read costs more
//! than the cap whatever the board's size; past it the service estimates from the board's
//! rank sketch.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, Select};
use futures::future::try_join_all;
use tracing::instrument;

use super::items::Slot;
use super::keys::{SHARDS, shard_partition, standing_key};
use super::{DynamoScoreStore, RANK_INDEX};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{Consistency, Count, RankedReads};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey};

/// Which side of a key a query reads.
#[derive(Clone, Copy)]
enum Side {
    After,
    Before,
}

impl DynamoScoreStore {
    /// Up to `limit` sort keys of one shard beyond `bound` on `side`, nearest first.
    async fn shard_keys(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        bound: Option<&str>,
        side: Side,
        limit: u64,
    ) -> Result<Vec<String>, StoreError> {
        let mut q = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(RANK_INDEX)
            .expression_attribute_values(":pk", AttributeValue::S(shard_partition(lb, shard)))
            .scan_index_forward(matches!(side, Side::After))
            .limit(limit.min(10_000) as i32);
        q = match (bound, side) {
            (None, _) => q.key_condition_expression("pk = :pk"),
            (Some(b), Side::After) => q
                .key_condition_expression("pk = :pk AND rk > :b")
                .expression_attribute_values(":b", AttributeValue::S(b.into())),
            (Some(b), Side::Before) => q
                .key_condition_expression("pk = :pk AND rk < :b")
                .expression_attribute_values(":b", AttributeValue::S(b.into())),
        };
        let mut keys = Vec::new();
        let mut pages = q.into_paginator().items().send();
        while let Some(item) = pages.next().await {
            let item = item.map_err(|e| StoreError::call("Query(by_rank)", e))?;
            if let Some(AttributeValue::S(rk)) = item.get("rk") {
                keys.push(rk.clone());
            }
            if keys.len() as u64 >= limit {
                break;
            }
        }
        Ok(keys)
    }

    /// The `limit` keys nearest to `bound` on `side`, across all shards, nearest first.
    async fn nearest(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        bound: Option<&RankKey>,
        side: Side,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let bound = bound.map(|k| k.sort_key(dir));
        let shards = try_join_all(
            (0..SHARDS).map(|shard| self.shard_keys(lb, shard, bound.as_deref(), side, limit)),
        )
        .await?;
        let mut all: Vec<String> = shards.into_iter().flatten().collect();
        all.sort_unstable();
        if matches!(side, Side::Before) {
            all.reverse();
        }
        all.truncate(limit as usize);
        Ok(all
            .iter()
            .filter_map(|rk| RankKey::from_sort_key(dir, rk))
            .collect())
    }
}

impl RankedReads for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn ranked_after(
        &self,
        on: BoardOrder<'_>,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        let BoardOrder { lb, dir } = on;
        self.nearest(lb, dir, after, Side::After, limit).await
    }

    #[instrument(skip(self))]
    async fn shard_after(
        &self,
        on: BoardOrder<'_>,
        shard: u64,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        let BoardOrder { lb, dir } = on;
        let bound = after.map(|k| k.sort_key(dir));
        let keys = self
            .shard_keys(lb, shard, bound.as_deref(), Side::After, limit)
            .await?;
        Ok(keys
            .iter()
            .filter_map(|rk| RankKey::from_sort_key(dir, rk))
            .collect())
    }

    #[instrument(skip(self))]
    async fn ranked_before(
        &self,
        on: BoardOrder<'_>,
        before: &RankKey,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        let BoardOrder { lb, dir } = on;
        let mut keys = self
            .nearest(lb, dir, Some(before), Side::Before, limit)
            .await?;
        keys.reverse();
        Ok(keys)
    }

    /// The standings of `players` by BatchGetItem (100 keys a call, unprocessed keys
    /// retried), in the order asked.
    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, StoreError> {
        let keys = players.iter().map(|p| standing_key(lb, p)).collect();
        let items = self
            .batch_get(keys, None, Consistency::Strong, "BatchGetItem(standings)")
            .await?;
        let mut found: HashMap<String, RankKey> = HashMap::new();
        for item in items {
            // A removed standing's tombstone is no key.
            if let Some(Slot::Standing(s)) = super::standings::slot_of(item)? {
                let key = s.index_entry().key;
                found.insert(key.player.clone(), key);
            }
        }
        Ok(players.iter().map(|p| found.remove(p.as_str())).collect())
    }

    /// How many standings rank before `before` (all if `None`), reading at most about
    /// `cap` keys: each shard counts up to its share of the cap (`Select COUNT` with a
    /// `Limit`, so DynamoDB reads no more than that), and a shard that reached it makes
    /// the count inexact.
    #[instrument(skip(self))]
    async fn count_before(
        &self,
        on: BoardOrder<'_>,
        before: Option<&RankKey>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        let BoardOrder { lb, dir } = on;
        let bound = before.map(|k| k.sort_key(dir));
        let per_shard = cap.div_ceil(SHARDS).max(1);
        let counts = try_join_all((0..SHARDS).map(|shard| {
            let bound = bound.clone();
            async move {
                let mut q = self
                    .client
                    .query()
                    .table_name(&self.table)
                    .index_name(RANK_INDEX)
                    .select(Select::Count)
                    .expression_attribute_values(
                        ":pk",
                        AttributeValue::S(shard_partition(lb, shard)),
                    );
                q = match bound {
                    None => q.key_condition_expression("pk = :pk"),
                    Some(b) => q
                        .key_condition_expression("pk = :pk AND rk < :b")
                        .expression_attribute_values(":b", AttributeValue::S(b)),
                };
                let mut total = 0_u64;
                let mut start = None;
                loop {
                    let left = per_shard - total;
                    let page = q
                        .clone()
                        .limit(left.min(i32::MAX as u64) as i32)
                        .set_exclusive_start_key(start)
                        .send()
                        .await
                        .map_err(|e| StoreError::call("Query(by_rank count)", e))?;
                    total += page.count() as u64;
                    start = page.last_evaluated_key;
                    if start.is_none() {
                        return Ok::<_, StoreError>((total, true));
                    }
                    if total >= per_shard {
                        return Ok((total, false));
                    }
                }
            }
        }))
        .await?;
        Ok(Count {
            n: counts.iter().map(|(n, _)| n).sum(),
            exact: counts.iter().all(|(_, exact)| *exact),
        })
    }
}
