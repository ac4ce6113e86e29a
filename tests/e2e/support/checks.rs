//! What a test compares: DynamoDB's standings against the index Redis holds.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use aws_sdk_dynamodb::types::AttributeValue;
use leaderboard::adapters::dynamodb::{SHARDS, StandingItem, shard_partition};
use leaderboard_rules::ids::LeaderboardId;

use super::*;

impl TestEnv {
    /// Every standing of a board, read from DynamoDB (all shards; removed standings'
    /// tombstones are not standings).
    pub async fn standings(&self, board: &LeaderboardId) -> Vec<StandingItem> {
        let mut out = Vec::new();
        for shard in 0..SHARDS {
            let mut pages = self
                .ctx
                .store
                .client()
                .query()
                .table_name(self.ctx.store.table())
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(
                    ":pk",
                    AttributeValue::S(shard_partition(board, shard)),
                )
                .consistent_read(true)
                .into_paginator()
                .items()
                .send();
            while let Some(item) = pages.next().await {
                let item = item.expect("query standings");
                if item
                    .get("kind")
                    .and_then(|k| k.as_s().ok())
                    .map(String::as_str)
                    != Some(StandingItem::KIND)
                {
                    continue;
                }
                out.push(serde_dynamo::from_item(item).expect("decode standing"));
            }
        }
        out
    }

    /// Deletes the board's keys from Redis (as a FLUSHALL would, for this test only).
    pub async fn wipe_index(&self, board: &LeaderboardId) {
        let (z, h) = self.ctx.index.keys(board);
        let m = self.ctx.index.marker_key(board);
        let d = self.ctx.index.distinct_key(board);
        let mut conn = self.redis.clone();
        let _: () = redis::cmd("DEL")
            .arg(&z)
            .arg(&h)
            .arg(&m)
            .arg(&d)
            .query_async(&mut conn)
            .await
            .expect("DEL");
    }

    /// Whether Redis holds the board's distinct scores (what dense ranks count).
    pub async fn distinct_kept(&self, board: &LeaderboardId) -> bool {
        key_exists(&mut self.redis.clone(), &self.ctx.index.distinct_key(board)).await
    }

    /// The index as Redis holds it: players in sorted-set order, and each hash entry.
    pub async fn index_snapshot(
        &self,
        board: &LeaderboardId,
    ) -> (Vec<String>, BTreeMap<String, String>) {
        self.try_index_snapshot(board)
            .await
            .expect("read the index")
    }

    /// [`TestEnv::index_snapshot`], or Redis' error (a test that restarts Redis sees its
    /// connection dropped once).
    pub async fn try_index_snapshot(
        &self,
        board: &LeaderboardId,
    ) -> redis::RedisResult<(Vec<String>, BTreeMap<String, String>)> {
        let (z, h) = self.ctx.index.keys(board);
        let mut conn = self.redis.clone();
        let members: Vec<String> = redis::cmd("ZRANGE")
            .arg(&z)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let hash: HashMap<String, String> =
            redis::cmd("HGETALL").arg(&h).query_async(&mut conn).await?;
        // The index stamps each value's version with when the entry took its place
        // (`version:stamp|...`): index-local (a rebuild restamps), so left out here.
        let unstamped = hash
            .into_iter()
            .map(|(player, value)| match value.split_once('|') {
                Some((version, rest)) => {
                    let version = version.split_once(':').map_or(version, |(v, _)| v);
                    (player, format!("{version}|{rest}"))
                }
                None => (player, value),
            });
        Ok((members, unstamped.collect()))
    }

    /// Asserts that Redis holds exactly DynamoDB's standings of `board`, in the
    /// documented order, and returns how many players were compared.
    pub async fn assert_index_matches_store(&self, board: &LeaderboardId) -> usize {
        match self.index_vs_store(board).await {
            Ok(n) => n,
            Err(diff) => panic!("{diff}"),
        }
    }

    /// Compares Redis (sorted-set order and every hash entry) with DynamoDB's standings.
    pub async fn index_vs_store(&self, board: &LeaderboardId) -> Result<usize, String> {
        let mut standings = self.standings(board).await;
        let dir = standings
            .first()
            .map_or(leaderboard_rules::order::Direction::Desc, |s| s.direction);
        standings.sort_by(|a, b| a.index_entry().key.cmp_in(&b.index_entry().key, dir));
        // Once more on an error: a connection the test's own Redis restart broke is
        // opened again by the next call.
        let snapshot = match self.try_index_snapshot(board).await {
            Ok(snapshot) => Ok(snapshot),
            Err(_) => self.try_index_snapshot(board).await,
        };
        let (members, hash) = snapshot.map_err(|e| format!("reading the index: {e}"))?;
        let expected_members: Vec<String> = standings
            .iter()
            .map(|s| s.index_entry().key.member())
            .collect();
        if members != expected_members {
            return Err(format!(
                "sorted-set order differs from DynamoDB: redis {} entries, dynamodb {}",
                members.len(),
                expected_members.len()
            ));
        }
        let expected_hash: BTreeMap<String, String> = standings
            .iter()
            .map(|s| {
                let e = s.index_entry();
                let value = format!(
                    "{}|{}|{}",
                    e.version,
                    e.key.zscore(e.direction),
                    e.key.member()
                );
                (s.player_id.to_string(), value)
            })
            .collect();
        if hash != expected_hash {
            let differing = expected_hash
                .iter()
                .filter(|(k, v)| hash.get(*k) != Some(v))
                .count();
            return Err(format!(
                "hash (player -> version|zscore|member) differs for {differing} players"
            ));
        }
        Ok(standings.len())
    }
}
