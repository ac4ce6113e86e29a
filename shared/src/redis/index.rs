//! [`RankIndex`] over Redis: each operation one script (or one pipeline of scripts per
//! cluster slot), its keys and arguments built here.

use std::collections::HashMap;
use std::time::Duration;

use redis::{Script, ScriptInvocation};
use tracing::instrument;

use super::codec::{
    Flat, decode_entries, decode_hash_value, health_of, ready, reply_err, standing_args,
};
use super::keys::BoardKeys;
use super::{APPLY_CHUNK, LOAD_CHUNK, RedisRankIndex};
use crate::error::IndexError;
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::store::{
    Around, BatchApplied, Health, IndexEntry, Placement, REPAIR_CLAIM, RankIndex, RankSketch,
    TOP_WINDOW, TopWindow,
};

impl RedisRankIndex {
    /// A script over a board's sorted set, hash and marker (the reads' keys, in that
    /// order), with `args`.
    fn board_read<'a>(&self, script: &'a Script, lb: &LeaderboardId) -> ScriptInvocation<'a> {
        let k = self.board_keys(lb);
        let mut inv = script.prepare_invoke();
        inv.key(k.z).key(k.h).key(k.m);
        inv
    }

    /// A script over every live and rebuild key of a board (the applies' and the
    /// rebuild swap's keys: z, h, m, tz, th, tv).
    fn board_write<'a>(&self, script: &'a Script, k: &BoardKeys) -> ScriptInvocation<'a> {
        let mut inv = script.prepare_invoke();
        inv.key(&k.z)
            .key(&k.h)
            .key(&k.m)
            .key(&k.tz)
            .key(&k.th)
            .key(&k.tv);
        inv
    }
}

impl RankIndex for RedisRankIndex {
    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let k = self.board_keys(&entry.board);
        let mut inv = self.board_write(&self.scripts.apply, &k);
        standing_args(&mut inv, entry);
        inv.arg("1")
            .arg(entry.expire_at.unwrap_or(0))
            .arg(TOP_WINDOW);
        let (applied, state, rank, total): (u8, String, u64, u64) = self.invoke(&inv).await?;
        Ok(Placement {
            applied: applied == 1,
            rank: rank + 1,
            total,
            health: health_of(&state),
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
                let expire_at = chunk.iter().filter_map(|&i| entries[i].expire_at).max();
                let mut inv = self.board_write(&self.scripts.apply_many, k);
                inv.arg(TOP_WINDOW).arg(expire_at.unwrap_or(0));
                for &i in chunk.iter() {
                    standing_args(&mut inv, &entries[i]);
                }
                pipe.invoke_script(&inv);
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
    ) -> Result<Option<Around>, IndexError> {
        let mut inv = self.board_read(&self.scripts.around, lb);
        inv.arg(player.as_str()).arg(k);
        let (state, rank, total, lo, flat): (String, i64, u64, u64, Flat) =
            self.invoke(&inv).await?;
        ready(&state)?;
        if rank < 0 {
            return Ok(None);
        }
        Ok(Some(Around {
            rank: rank as u64 + 1,
            total,
            first_rank: lo + 1,
            entries: decode_entries(dir, flat)?,
            rank_approximate: false,
            total_approximate: false,
        }))
    }

    #[instrument(skip(self))]
    async fn top(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64), IndexError> {
        let mut inv = self.board_read(&self.scripts.top, lb);
        inv.arg(n);
        let (state, flat, total): (String, Flat, u64) = self.invoke(&inv).await?;
        ready(&state)?;
        Ok((decode_entries(dir, flat)?, total))
    }

    #[instrument(skip(self))]
    async fn page(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<(u64, Vec<RankKey>, u64), IndexError> {
        let mut inv = self.board_read(&self.scripts.page, lb);
        match after {
            Some(k) => inv.arg("1").arg(k.zscore(dir)).arg(k.member()),
            None => inv.arg("0").arg(0).arg(""),
        };
        inv.arg(limit);
        let (state, pos, total, flat): (String, u64, u64, Flat) = self.invoke(&inv).await?;
        ready(&state)?;
        Ok((pos, decode_entries(dir, flat)?, total))
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, IndexError> {
        let mut inv = self.board_read(&self.scripts.keys_of, lb);
        for p in players {
            inv.arg(p.as_str());
        }
        let (state, values): (String, Vec<Option<String>>) = self.invoke(&inv).await?;
        ready(&state)?;
        if values.len() != players.len() {
            return Err(reply_err("keys_of reply count"));
        }
        values
            .into_iter()
            .map(|v| match v {
                None => Ok(None),
                Some(v) => decode_hash_value(dir, &v)
                    .map(Some)
                    .ok_or_else(|| reply_err("undecodable hash value")),
            })
            .collect()
    }

    #[instrument(skip(self))]
    async fn init_board(
        &self,
        lb: &LeaderboardId,
        expire_at: Option<i64>,
    ) -> Result<(), IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.scripts.init.prepare_invoke();
        inv.key(&k.m)
            .key(&k.z)
            .key(&k.h)
            .arg(expire_at.unwrap_or(0));
        let _set: u8 = self.invoke(&inv).await?;
        Ok(())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn health(&self, boards: &[LeaderboardId]) -> Result<Vec<Health>, IndexError> {
        let keys: Vec<BoardKeys> = boards.iter().map(|lb| self.board_keys(lb)).collect();
        let routing: Vec<String> = keys.iter().map(|k| k.m.clone()).collect();
        let states: Vec<String> = self
            .per_slot(&routing, Some(&self.scripts.health), |pipe, i| {
                let mut inv = self.scripts.health.prepare_invoke();
                inv.key(&keys[i].z).key(&keys[i].h).key(&keys[i].m);
                pipe.invoke_script(&inv);
            })
            .await?;
        Ok(states.iter().map(|s| health_of(s)).collect())
    }

    #[instrument(skip(self))]
    async fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        fresh: bool,
    ) -> Result<bool, IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.scripts.begin.prepare_invoke();
        inv.key(&k.m)
            .key(&k.tz)
            .key(&k.th)
            .arg(gen_id)
            .arg(if fresh { "1" } else { "0" });
        let resumed: u8 = self.invoke(&inv).await?;
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
        let k = self.board_keys(lb);
        let mut pipe = redis::pipe();
        let batch: Vec<&IndexEntry> = newest.into_values().collect();
        for chunk in batch.chunks(LOAD_CHUNK) {
            let mut inv = self.scripts.load.prepare_invoke();
            inv.key(&k.tz).key(&k.th);
            for e in chunk {
                standing_args(&mut inv, e);
            }
            pipe.invoke_script(&inv);
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
        let k = self.board_keys(lb);
        let mut inv = self.board_write(&self.scripts.finish, &k);
        inv.arg(gen_id).arg(expire_at.unwrap_or(0));
        let swapped: u8 = self.invoke(&inv).await?;
        Ok(swapped == 1)
    }

    #[instrument(skip(self))]
    async fn top_window(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        known: Option<&str>,
    ) -> Result<TopWindow, IndexError> {
        let mut inv = self.board_read(&self.scripts.top_window, lb);
        inv.key(self.board_keys(lb).tv)
            .arg(known.unwrap_or_default())
            .arg(TOP_WINDOW);
        let (state, version, total, flat): (String, String, u64, Option<Flat>) =
            self.invoke(&inv).await?;
        ready(&state)?;
        Ok(TopWindow {
            version,
            total,
            entries: flat.map(|f| decode_entries(dir, f)).transpose()?,
        })
    }

    #[instrument(skip(self))]
    async fn sketch(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        marks: u64,
        min_size: u64,
    ) -> Result<RankSketch, IndexError> {
        let mut inv = self.board_read(&self.scripts.sketch, lb);
        inv.arg(marks).arg(min_size);
        let (state, total, ranks, flat): (String, u64, Vec<u64>, Flat) = self.invoke(&inv).await?;
        ready(&state)?;
        Ok(RankSketch {
            at: crate::time::now_ms(),
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
            .arg(crate::time::now_ms())
            .arg("NX")
            .arg("PX")
            .arg(REPAIR_CLAIM.as_millis() as u64);
        let set: Option<String> = self.command(&cmd).await?;
        Ok(set.is_some())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn mark_stale(&self, boards: &[LeaderboardId]) -> Result<u64, IndexError> {
        let markers: Vec<String> = boards.iter().map(|lb| self.marker_key(lb)).collect();
        let marked: Vec<u64> = self
            .per_slot(&markers, Some(&self.scripts.mark_stale), |pipe, i| {
                let mut inv = self.scripts.mark_stale.prepare_invoke();
                inv.key(&markers[i]);
                pipe.invoke_script(&inv);
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
        let mut inv = self.scripts.lease.prepare_invoke();
        inv.key(self.board_keys(lb).lease)
            .arg(owner)
            .arg(ttl.as_millis().max(1) as u64);
        let held: u8 = self.invoke(&inv).await?;
        Ok(held == 1)
    }

    #[instrument(skip(self))]
    async fn release_lease(&self, lb: &LeaderboardId, owner: &str) -> Result<(), IndexError> {
        let mut inv = self.scripts.release.prepare_invoke();
        inv.key(self.board_keys(lb).lease).arg(owner);
        let _released: u8 = self.invoke(&inv).await?;
        Ok(())
    }
}
