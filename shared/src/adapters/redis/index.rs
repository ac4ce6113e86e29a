//! [`RankIndex`] over Redis: each operation one script (or one pipeline of scripts per
//! cluster slot), its keys and arguments built here.

use std::collections::HashMap;

use tracing::instrument;

use super::calls::{self, Call};
use super::codec::{
    decode_cards, decode_entries, decode_hash_value, decode_metadata, health_of, metadata_in,
    ready, reply_err,
};
use super::keys::BoardKeys;
use super::{APPLY_CHUNK, RedisRankIndex};
use leaderboard_core::store::IndexError;
use leaderboard_core::store::{
    Around, BatchApplied, Health, IndexEntry, IndexReads, IndexWrites, PageAt, Place, Placement,
    PlayerRow, PlayerRows, RowCards, RowMetadata, Slice, TopWindow,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, RankKey, RankMode};

impl RedisRankIndex {
    /// Sends one script call (see [`Self::invoke`]).
    pub(super) async fn run<T: redis::FromRedisValue>(
        &self,
        call: &impl Call,
    ) -> Result<T, IndexError> {
        self.invoke(&call.invocation(&self.scripts)).await
    }
}

impl IndexWrites for RedisRankIndex {
    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let keys = self.board_keys(&entry.board);
        let call = calls::Apply { keys: &keys, entry };
        Ok(placement(self.run(&call).await?))
    }

    #[instrument(skip_all, fields(count = entries.len()))]
    async fn apply_each(&self, entries: &[IndexEntry]) -> Result<Vec<Placement>, IndexError> {
        let keys: Vec<BoardKeys> = entries.iter().map(|e| self.board_keys(&e.board)).collect();
        let routing: Vec<String> = keys.iter().map(|k| k.z.clone()).collect();
        let replies: Vec<calls::Applied> = self
            .per_slot(&routing, Some(&self.scripts.apply), |pipe, i| {
                let call = calls::Apply {
                    keys: &keys[i],
                    entry: &entries[i],
                };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        Ok(replies.into_iter().map(placement).collect())
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
}

/// What `apply.lua`'s reply says of the player's place (its rank 1-based).
fn placement(reply: calls::Applied) -> Placement {
    Placement {
        applied: reply.applied,
        place: (reply.place).map(|(rank, total)| Place {
            rank: rank + 1,
            total,
        }),
        health: health_of(&reply.state),
    }
}

impl IndexReads for RedisRankIndex {
    #[instrument(skip(self))]
    async fn around(
        &self,
        on: BoardOrder<'_>,
        player: &PlayerId,
        k: u64,
        mode: RankMode,
    ) -> Result<Option<Around>, IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::Around {
            keys: &keys,
            player: player.as_str(),
            k,
            mode,
            cards: &self.inline_cards,
        };
        let r: calls::AroundReply = self.run(&call).await?;
        ready(&r.state)?;
        if r.rank < 0 {
            return Ok(None);
        }
        Ok(Some(Around {
            rank: r.rank as u64 + 1,
            total: r.total,
            first_rank: r.first + 1,
            first_place: r.first_place,
            entries: decode_entries(dir, r.entries)?,
            rank_approximate: false,
            total_approximate: false,
            cards: decode_cards(r.cards),
            metadata: decode_metadata(r.metadata),
        }))
    }

    #[instrument(skip(self))]
    async fn top_named(
        &self,
        on: BoardOrder<'_>,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64, RowCards, RowMetadata), IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::Top {
            keys: &keys,
            n,
            cards: &self.inline_cards,
        };
        let r: calls::TopReply = self.run(&call).await?;
        ready(&r.state)?;
        let entries = decode_entries(dir, r.entries)?;
        Ok((
            entries,
            r.total,
            decode_cards(r.cards),
            decode_metadata(r.metadata),
        ))
    }

    #[instrument(skip(self))]
    async fn page(
        &self,
        on: BoardOrder<'_>,
        at: PageAt<'_>,
        limit: u64,
        mode: RankMode,
    ) -> Result<Slice, IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::Page {
            keys: &keys,
            dir,
            at,
            limit,
            mode,
            cards: &self.inline_cards,
        };
        let r: calls::PageReply = self.run(&call).await?;
        ready(&r.state)?;
        if r.stamps.len() != r.entries.len() {
            return Err(reply_err("page stamps count"));
        }
        Ok(Slice {
            before: r.before,
            first_place: r.first_place,
            entries: decode_entries(dir, r.entries)?,
            total: r.total,
            stamps: r.stamps,
            clock: r.clock,
            cards: decode_cards(r.cards),
            metadata: decode_metadata(r.metadata),
        })
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn rows_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
        mode: RankMode,
    ) -> Result<PlayerRows, IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::Entries {
            keys: &keys,
            players,
            mode,
            cards: &self.inline_cards,
        };
        let r: calls::EntriesReply = self.run(&call).await?;
        ready(&r.state)?;
        let rows = (r.rows.into_iter())
            .map(|row| {
                let key = (row.zscore.parse().ok())
                    .and_then(|z| RankKey::from_entry(dir, &row.member, z))
                    .filter(|k| k.player == row.player)
                    .ok_or_else(|| reply_err("undecodable row"))?;
                Ok(PlayerRow {
                    rank: row.rank0 + 1,
                    place: row.place,
                    key,
                })
            })
            .collect::<Result<_, IndexError>>()?;
        Ok(PlayerRows {
            rows,
            total: r.total,
            cards: decode_cards(r.cards),
            metadata: decode_metadata(r.metadata),
        })
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
    ) -> Result<(Vec<Option<RankKey>>, RowMetadata), IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::KeysOf {
            keys: &keys,
            players,
        };
        let calls::KeysOfReply { state, values } = self.run(&call).await?;
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
    async fn top_window(
        &self,
        on: BoardOrder<'_>,
        known: Option<&str>,
        named: u64,
        cards_held: bool,
    ) -> Result<TopWindow, IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.board_keys(lb);
        let call = calls::TopWindow {
            keys: &keys,
            known: known.unwrap_or_default(),
            named,
            cards: &self.inline_cards,
            held: cards_held,
        };
        let r: calls::TopWindowReply = self.run(&call).await?;
        ready(&r.state)?;
        Ok(TopWindow {
            version: r.version,
            total: r.total,
            entries: (r.entries.map(|f| decode_entries(dir, f))).transpose()?,
            clock: r.clock,
            cards: decode_cards(r.cards),
            metadata: decode_metadata(r.metadata),
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
}
