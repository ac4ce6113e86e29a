//! [`RedisRankIndex`]'s upkeep and card copies over Redis: markers' health, the
//! rebuild's scripts, repair claims, leases, the sketch, the cards kept beside the boards.

use std::collections::HashMap;
use std::time::Duration;

use tracing::instrument;

use super::calls::{self, Call};
use super::codec::{decode_card, decode_entries, encode_card, health_of, ready, reply_err};
use super::keys::BoardKeys;
use super::{CARD_TTL, LOAD_CHUNK, RedisRankIndex};
use leaderboard_core::store::{
    CardCopies, Health, IndexEntry, IndexUpkeep, REPAIR_CLAIM, RankSketch, VersionedCard,
};
use leaderboard_core::store::{IndexError, RebuildStart};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::BoardOrder;

impl RedisRankIndex {
    /// The keys of some players' card copies.
    fn card_keys<'a>(&self, players: impl Iterator<Item = &'a PlayerId>) -> Vec<String> {
        players
            .map(|p| format!("{}{p}", self.card_prefix))
            .collect()
    }
}

impl CardCopies for RedisRankIndex {
    #[instrument(skip_all, fields(count = players.len()))]
    async fn cards(&self, players: &[PlayerId]) -> Result<Vec<Option<VersionedCard>>, IndexError> {
        if players.is_empty() {
            return Ok(Vec::new());
        }
        let keys = self.card_keys(players.iter());
        // One call on one node; on a cluster one per key (each in its own slot), all at once.
        let raw: Vec<Option<String>> = match self.topology() {
            super::Topology::Single => self.run(&calls::Cards { keys: &keys }).await?,
            super::Topology::Cluster => {
                let replies: Vec<Vec<Option<String>>> = self
                    .per_slot(&keys, Some(&self.scripts.cards), |pipe, i| {
                        let call = calls::Cards {
                            keys: std::slice::from_ref(&keys[i]),
                        };
                        pipe.invoke_script(&call.invocation(&self.scripts));
                    })
                    .await?;
                replies.into_iter().flatten().collect()
            }
        };
        if raw.len() != players.len() {
            return Err(reply_err("cards reply count"));
        }
        Ok(raw
            .iter()
            .map(|c| c.as_deref().and_then(decode_card))
            .collect())
    }

    #[instrument(skip_all, fields(count = cards.len()))]
    async fn put_cards(&self, cards: &[(PlayerId, VersionedCard)]) -> Result<(), IndexError> {
        if cards.is_empty() {
            return Ok(());
        }
        let keys = self.card_keys(cards.iter().map(|(p, _)| p));
        let texts: Vec<String> = cards.iter().map(|(_, c)| encode_card(&c.card)).collect();
        let _kept: Vec<u8> = self
            .per_slot(&keys, Some(&self.scripts.card_put), |pipe, i| {
                let call = calls::CardPut {
                    key: &keys[i],
                    version: cards[i].1.version,
                    card: &texts[i],
                    ttl_s: CARD_TTL.as_secs(),
                };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        Ok(())
    }
}

impl IndexUpkeep for RedisRankIndex {
    fn slot_of(&self, lb: &LeaderboardId) -> u16 {
        lb.cluster_slot()
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn health(&self, boards: &[LeaderboardId]) -> Result<Vec<Health>, IndexError> {
        let keys: Vec<BoardKeys> = boards.iter().map(|lb| self.board_keys(lb)).collect();
        let routing: Vec<String> = keys.iter().map(|k| k.m.clone()).collect();
        let states: Vec<String> = self
            .per_slot(&routing, Some(&self.scripts.health), |pipe, i| {
                let call = calls::Health { keys: &keys[i] };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        Ok(states.iter().map(|s| health_of(s)).collect())
    }

    #[instrument(skip(self))]
    async fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        start: RebuildStart,
    ) -> Result<bool, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Begin {
            keys: &keys,
            gen_id,
            fresh: start.fresh,
            dense_ranks: start.dense_ranks,
        };
        let resumed: u8 = self.run(&call).await?;
        Ok(resumed == 1)
    }

    #[instrument(skip(self, entries), fields(count = entries.len()))]
    async fn load(&self, lb: &LeaderboardId, entries: &[IndexEntry]) -> Result<(), IndexError> {
        // The script takes distinct players; of repeats, the newest version wins anyway.
        let mut newest: HashMap<&str, &IndexEntry> = HashMap::with_capacity(entries.len());
        for e in entries {
            let slot = newest.entry(e.key.player.as_str()).or_insert(e);
            if e.version > slot.version {
                *slot = e;
            }
        }
        if newest.is_empty() {
            return Ok(());
        }
        let keys = self.board_keys(lb);
        let mut pipe = redis::pipe();
        let batch: Vec<&IndexEntry> = newest.into_values().collect();
        for chunk in batch.chunks(LOAD_CHUNK) {
            let call = calls::Load {
                keys: &keys,
                entries: chunk,
            };
            pipe.invoke_script(&call.invocation(&self.scripts));
        }
        let _loaded: Vec<redis::Value> = self.pipeline_scripts(&self.scripts.load, &pipe).await?;
        Ok(())
    }

    #[instrument(skip(self))]
    async fn finish_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        expire_at: Option<i64>,
    ) -> Result<bool, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Finish {
            keys: &keys,
            gen_id,
            expire_at,
        };
        let swapped: u8 = self.run(&call).await?;
        Ok(swapped == 1)
    }

    #[instrument(skip(self))]
    async fn sketch(
        &self,
        on: BoardOrder<'_>,
        marks: u64,
        min_size: u64,
    ) -> Result<RankSketch, IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::Sketch {
            keys: &keys,
            marks,
            min_size,
        };
        let calls::SketchReply {
            state,
            total,
            ranks,
            entries: flat,
        } = self.run(&call).await?;
        ready(&state)?;
        Ok(RankSketch {
            at: leaderboard_rules::time::now_ms(),
            total,
            ranks,
            keys: decode_entries(dir, flat)?
                .iter()
                .map(|k| k.sort_key(dir))
                .collect(),
        })
    }

    #[instrument(skip(self))]
    async fn claim_repair(&self, lb: &LeaderboardId) -> Result<bool, IndexError> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.board_keys(lb).rq)
            .arg(leaderboard_rules::time::now_ms())
            .arg("NX")
            .arg("PX")
            .arg(REPAIR_CLAIM.as_millis() as u64);
        let set: Option<String> = self.command(&cmd).await?;
        Ok(set.is_some())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn mark_stale(&self, boards: &[LeaderboardId]) -> Result<u64, IndexError> {
        let keys: Vec<BoardKeys> = boards.iter().map(|lb| self.board_keys(lb)).collect();
        let markers: Vec<String> = keys.iter().map(|k| k.m.clone()).collect();
        let marked: Vec<u64> = self
            .per_slot(&markers, Some(&self.scripts.mark_stale), |pipe, i| {
                let call = calls::MarkStale { keys: &keys[i] };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        Ok(marked.iter().sum())
    }

    #[instrument(skip(self))]
    async fn acquire_lease(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Lease {
            keys: &keys,
            owner,
            ttl_ms: ttl.as_millis().max(1) as u64,
        };
        let held: u8 = self.run(&call).await?;
        Ok(held == 1)
    }

    #[instrument(skip(self))]
    async fn release_lease(&self, lb: &LeaderboardId, owner: &str) -> Result<(), IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Release { keys: &keys, owner };
        let _released: u8 = self.run(&call).await?;
        Ok(())
    }
}
