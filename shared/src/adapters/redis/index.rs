//! [`RankIndex`] over Redis: each operation one script (or one pipeline of scripts per
//! cluster slot), its keys and arguments built here.

use std::collections::HashMap;
use std::time::Duration;

use tracing::instrument;

use super::calls::{self, Call};
use super::codec::{
    Flat, RawCards, RawMetadata, decode_card, decode_cards, decode_entries, decode_hash_value,
    decode_metadata, encode_card, health_of, metadata_in, ready, reply_err,
};
use super::keys::BoardKeys;
use super::{APPLY_CHUNK, CARD_TTL, LOAD_CHUNK, RedisRankIndex};
use leaderboard_core::store::{
    Around, BatchApplied, Health, IndexEntry, PageAt, Place, Placement, PlayerRow, PlayerRows,
    REPAIR_CLAIM, RankIndex, RankSketch, RowCards, RowMetadata, Slice, TopWindow, VersionedCard,
};
use leaderboard_core::store::{IndexError, RebuildStart};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{Direction, RankKey, RankMode};

impl RedisRankIndex {
    /// Sends one script call (see [`Self::invoke`]).
    pub(super) async fn run<T: redis::FromRedisValue>(
        &self,
        call: &impl Call,
    ) -> Result<T, IndexError> {
        self.invoke(&call.invocation(&self.scripts)).await
    }
}

impl RedisRankIndex {
    /// The keys of some players' card copies.
    fn card_keys<'a>(&self, players: impl Iterator<Item = &'a PlayerId>) -> Vec<String> {
        players
            .map(|p| format!("{}{p}", self.card_prefix))
            .collect()
    }
}

impl RankIndex for RedisRankIndex {
    fn slot_of(&self, lb: &LeaderboardId) -> u16 {
        lb.cluster_slot()
    }

    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let keys = self.board_keys(&entry.board);
        let call = calls::Apply { keys: &keys, entry };
        let reply: calls::Applied = self.run(&call).await?;
        Ok(Placement {
            applied: reply.applied,
            place: (reply.place).map(|(rank, total)| Place {
                rank: rank + 1,
                total,
            }),
            health: health_of(&reply.state),
        })
    }

    #[instrument(skip_all, fields(count = entries.len()))]
    async fn apply_many(&self, entries: &[IndexEntry]) -> Result<BatchApplied, IndexError> {
        if entries.is_empty() {
            return Ok(BatchApplied::default());
        }
        // One script call per board and chunk (in stream order within it); the calls go
        // in one pipeline per slot.
        let mut slot_of: HashMap<&LeaderboardId, usize> = HashMap::new();
        let mut by_board: Vec<(&LeaderboardId, Vec<usize>)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let slot = *slot_of.entry(&e.board).or_insert_with(|| {
                by_board.push((&e.board, Vec::new()));
                by_board.len() - 1
            });
            by_board[slot].1.push(i);
        }
        let calls: Vec<(&LeaderboardId, BoardKeys, &[usize])> = by_board
            .iter()
            .flat_map(|(board, idx)| {
                idx.chunks(APPLY_CHUNK)
                    .map(|chunk| (*board, self.board_keys(board), chunk))
            })
            .collect();
        let routing: Vec<String> = calls.iter().map(|(_, k, _)| k.z.clone()).collect();
        let replies: Vec<(String, Vec<u8>)> = self
            .per_slot(&routing, Some(&self.scripts.apply_many), |pipe, c| {
                let (_, k, chunk) = &calls[c];
                let call = calls::ApplyMany {
                    keys: k,
                    entries: chunk.iter().map(|&i| &entries[i]).collect(),
                    expire_at: chunk.iter().filter_map(|&i| entries[i].expire_at).max(),
                };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        let mut out = BatchApplied {
            applied: vec![false; entries.len()],
            unready: Vec::new(),
        };
        for ((board, _, chunk), (state, flags)) in calls.iter().zip(replies) {
            if flags.len() != chunk.len() {
                return Err(reply_err("apply flags count"));
            }
            for (&i, a) in chunk.iter().zip(flags) {
                out.applied[i] = a == 1;
            }
            let health = health_of(&state);
            if health != Health::Ready && !out.unready.iter().any(|(b, _)| b == *board) {
                out.unready.push(((*board).clone(), health));
            }
        }
        Ok(out)
    }

    #[instrument(skip(self))]
    async fn around(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        player: &PlayerId,
        k: u64,
        mode: RankMode,
    ) -> Result<Option<Around>, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Around {
            keys: &keys,
            player: player.as_str(),
            k,
            mode,
            cards: &self.inline_cards,
        };
        type Reply = (String, i64, u64, u64, Flat, u64, RawCards, RawMetadata);
        let (state, rank, total, lo, flat, first_place, cards, md): Reply = self.run(&call).await?;
        ready(&state)?;
        if rank < 0 {
            return Ok(None);
        }
        Ok(Some(Around {
            rank: rank as u64 + 1,
            total,
            first_rank: lo + 1,
            first_place,
            entries: decode_entries(dir, flat)?,
            rank_approximate: false,
            total_approximate: false,
            cards: decode_cards(cards),
            metadata: decode_metadata(md),
        }))
    }

    #[instrument(skip(self))]
    async fn top_named(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64, RowCards, RowMetadata), IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Top {
            keys: &keys,
            n,
            cards: &self.inline_cards,
        };
        type Reply = (String, Flat, u64, RawCards, RawMetadata);
        let (state, flat, total, cards, md): Reply = self.run(&call).await?;
        ready(&state)?;
        let entries = decode_entries(dir, flat)?;
        Ok((entries, total, decode_cards(cards), decode_metadata(md)))
    }

    #[instrument(skip(self))]
    async fn page(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        at: PageAt<'_>,
        limit: u64,
        mode: RankMode,
    ) -> Result<Slice, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Page {
            keys: &keys,
            dir,
            at,
            limit,
            mode,
            cards: &self.inline_cards,
        };
        type Reply = (
            String,
            u64,
            u64,
            Flat,
            u64,
            Vec<i64>,
            i64,
            RawCards,
            RawMetadata,
        );
        let (state, before, total, flat, first_place, stamps, clock, cards, md): Reply =
            self.run(&call).await?;
        ready(&state)?;
        if stamps.len() != flat.len() {
            return Err(reply_err("page stamps count"));
        }
        Ok(Slice {
            before,
            first_place,
            entries: decode_entries(dir, flat)?,
            total,
            stamps,
            clock,
            cards: decode_cards(cards),
            metadata: decode_metadata(md),
        })
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn rows_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
        mode: RankMode,
    ) -> Result<PlayerRows, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Entries {
            keys: &keys,
            players,
            mode,
            cards: &self.inline_cards,
        };
        // Per row: player, 0-based rank, place, member, zscore.
        type Reply = (
            String,
            u64,
            Vec<(String, u64, u64, String, String)>,
            RawCards,
            RawMetadata,
        );
        let (state, total, flat, cards, md): Reply = self.run(&call).await?;
        ready(&state)?;
        let rows = flat
            .into_iter()
            .map(|(player, rank0, place, member, zscore)| {
                let key = zscore
                    .parse()
                    .ok()
                    .and_then(|z| RankKey::from_entry(dir, &member, z))
                    .filter(|k| k.player == player)
                    .ok_or_else(|| reply_err("undecodable row"))?;
                Ok(PlayerRow {
                    rank: rank0 + 1,
                    place,
                    key,
                })
            })
            .collect::<Result<_, IndexError>>()?;
        Ok(PlayerRows {
            rows,
            total,
            cards: decode_cards(cards),
            metadata: decode_metadata(md),
        })
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> Result<(Vec<Option<RankKey>>, RowMetadata), IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::KeysOf {
            keys: &keys,
            players,
        };
        let (state, values): (String, Vec<Option<String>>) = self.run(&call).await?;
        ready(&state)?;
        if values.len() != players.len() {
            return Err(reply_err("keys_of reply count"));
        }
        // The hash values carry each entry's metadata too (see `prelude.lua`).
        let metadata = values
            .iter()
            .map(|v| v.as_deref().and_then(metadata_in))
            .collect();
        let keys = values
            .into_iter()
            .map(|v| match v {
                None => Ok(None),
                Some(v) => decode_hash_value(dir, &v)
                    .map(Some)
                    .ok_or_else(|| reply_err("undecodable hash value")),
            })
            .collect::<Result<_, IndexError>>()?;
        Ok((keys, Some(metadata)))
    }

    #[instrument(skip(self))]
    async fn init_board(
        &self,
        lb: &LeaderboardId,
        expire_at: Option<i64>,
        dense_ranks: bool,
    ) -> Result<(), IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Init {
            keys: &keys,
            expire_at,
            dense_ranks,
        };
        let _set: u8 = self.run(&call).await?;
        Ok(())
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
    async fn top_window(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        known: Option<&str>,
        named: u64,
        cards_held: bool,
    ) -> Result<TopWindow, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::TopWindow {
            keys: &keys,
            known: known.unwrap_or_default(),
            named,
            cards: &self.inline_cards,
            held: cards_held,
        };
        type Reply = (
            String,
            String,
            u64,
            Option<Flat>,
            i64,
            RawCards,
            RawMetadata,
        );
        let (state, version, total, flat, clock, cards, md): Reply = self.run(&call).await?;
        ready(&state)?;
        Ok(TopWindow {
            version,
            total,
            entries: flat.map(|f| decode_entries(dir, f)).transpose()?,
            clock,
            cards: decode_cards(cards),
            metadata: decode_metadata(md),
        })
    }

    #[instrument(skip_all, fields(count = players.len()))]
    async fn row_metadata(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> Result<RowMetadata, IndexError> {
        if players.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let keys = self.board_keys(lb);
        let values: Vec<Option<String>> = self
            .command(
                redis::cmd("HMGET")
                    .arg(&keys.h)
                    .arg(players.iter().map(PlayerId::as_str).collect::<Vec<_>>()),
            )
            .await?;
        Ok(Some(
            values
                .iter()
                .map(|v| v.as_deref().and_then(metadata_in))
                .collect(),
        ))
    }

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

    #[instrument(skip(self))]
    async fn sketch(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        marks: u64,
        min_size: u64,
    ) -> Result<RankSketch, IndexError> {
        let keys = self.board_keys(lb);
        let call = calls::Sketch {
            keys: &keys,
            marks,
            min_size,
        };
        let (state, total, ranks, flat): (String, u64, Vec<u64>, Flat) = self.run(&call).await?;
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
