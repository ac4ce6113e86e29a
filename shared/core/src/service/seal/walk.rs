//! A walk over a whole board in rank order, straight from DynamoDB: the board's write
//! shards each read in rank order (a page at a time) and merged, so every standing is
//! read once, whatever the board's size. It starts after any rank key, which is how a
//! sealing run that stopped goes on. A board that keeps no rank order in DynamoDB
//! (`Board::rank_index`) has each shard read whole from its rows and sorted in memory
//! instead (docs/cost.md: what that costs).

use leaderboard_rules::page::Paging;
use std::collections::VecDeque;

use futures::future::try_join_all;

use crate::store::{EntryKind, RankedReads, RebuildStore, StoreError};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey};

/// Standings read from one shard at a time.
const SHARD_PAGE: u64 = 500;

/// Rows read at a time from a shard of a board without a rank order.
const ROWS_PAGE: u32 = 1_000;

struct Shard {
    buffer: VecDeque<RankKey>,
    /// The last key read from this shard (where its next page starts).
    last: Option<RankKey>,
    exhausted: bool,
}

pub struct Walk<'a, S> {
    store: &'a S,
    lb: &'a LeaderboardId,
    dir: Direction,
    /// Whether the board keeps its rank order in DynamoDB (else its rows are sorted).
    ranked: bool,
    shards: Vec<Shard>,
}

impl<'a, S: RankedReads + RebuildStore> Walk<'a, S> {
    /// A walk over `lb` starting after `after` (from the top if `None`), through the
    /// board's rank order in DynamoDB if it keeps one (`ranked`), else its rows.
    pub fn new(
        store: &'a S,
        lb: &'a LeaderboardId,
        dir: Direction,
        ranked: bool,
        after: Option<RankKey>,
    ) -> Self {
        let shards = (0..store.shard_count())
            .map(|_| Shard {
                buffer: VecDeque::new(),
                last: after.clone(),
                exhausted: false,
            })
            .collect();
        Self {
            store,
            lb,
            dir,
            ranked,
            shards,
        }
    }

    /// The next `n` standings in rank order (fewer only at the board's end).
    pub async fn next(&mut self, n: usize) -> Result<Vec<RankKey>, StoreError> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            self.refill().await?;
            let dir = self.dir;
            let best = self
                .shards
                .iter()
                .enumerate()
                .filter_map(|(i, s)| s.buffer.front().map(|k| (i, k)))
                .min_by(|a, b| a.1.cmp_in(b.1, dir))
                .map(|(i, _)| i);
            let Some(i) = best else { break };
            if let Some(key) = self.shards[i].buffer.pop_front() {
                out.push(key);
            }
        }
        Ok(out)
    }

    /// Reads the next page of every shard whose buffer ran dry, in parallel.
    async fn refill(&mut self) -> Result<(), StoreError> {
        if !self.ranked {
            return self.sort_rows().await;
        }
        let (store, lb, dir) = (self.store, self.lb, self.dir);
        let pages = self
            .shards
            .iter()
            .enumerate()
            .filter(|(_, s)| s.buffer.is_empty() && !s.exhausted)
            .map(|(i, s)| async move {
                let page = store
                    .shard_after(
                        BoardOrder::new(lb, dir),
                        i as u64,
                        s.last.as_ref(),
                        SHARD_PAGE,
                    )
                    .await?;
                Ok::<_, StoreError>((i, page))
            });
        for (i, page) in try_join_all(pages).await? {
            let shard = &mut self.shards[i];
            shard.exhausted = (page.len() as u64) < SHARD_PAGE;
            if let Some(last) = page.last() {
                shard.last = Some(last.clone());
            }
            shard.buffer.extend(page);
        }
        Ok(())
    }

    /// Reads every shard not read yet whole from its rows (standings only, not the
    /// tombstones of removed ones) and sorts it, keeping what lies after the start.
    async fn sort_rows(&mut self) -> Result<(), StoreError> {
        let (store, lb, dir) = (self.store, self.lb, self.dir);
        let shards = self
            .shards
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.exhausted)
            .map(|(i, s)| async move {
                let mut keys = Vec::new();
                let mut next: Option<String> = None;
                loop {
                    let (page, more) = store
                        .standings_page(lb, i as u64, Paging::new(next.as_deref(), ROWS_PAGE))
                        .await?;
                    let standings = page.into_iter().filter(|e| e.kind == EntryKind::Standing);
                    keys.extend(standings.map(|e| e.key).filter(|k| {
                        s.last
                            .as_ref()
                            .is_none_or(|after| k.cmp_in(after, dir).is_gt())
                    }));
                    match more {
                        Some(sk) => next = Some(sk),
                        None => break,
                    }
                }
                keys.sort_by(|a, b| a.cmp_in(b, dir));
                Ok::<_, StoreError>((i, keys))
            });
        for (i, keys) in try_join_all(shards).await? {
            let shard = &mut self.shards[i];
            shard.exhausted = true;
            shard.buffer.extend(keys);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory;
    use RankedReads;
    use leaderboard_rules::board::Policy;

    #[tokio::test]
    async fn a_merged_walk_reads_the_board_in_rank_order_and_resumes_after_any_key() {
        let ctx = memory::context();
        let scores: Vec<(String, i64)> = (0..1_234).map(|i| (format!("p{i}"), i % 97)).collect();
        let refs: Vec<(&str, i64)> = scores.iter().map(|(p, s)| (p.as_str(), *s)).collect();
        let lb = memory::seed(&ctx, "walk:b", Policy::Best, &refs).await;
        let dir = Direction::Desc;
        let all = ctx
            .store
            .ranked_after(BoardOrder::new(&lb, dir), None, 10_000)
            .await
            .unwrap();
        assert_eq!(all.len(), 1_234);
        let mut walk = Walk::new(&ctx.store, &lb, dir, true, None);
        let mut walked = Vec::new();
        loop {
            let page = walk.next(300).await.unwrap();
            walked.extend(page.iter().cloned());
            if page.len() < 300 {
                break;
            }
        }
        assert_eq!(walked, all);
        // Resumed after the 700th key, as a new run would.
        let mut again = Walk::new(&ctx.store, &lb, dir, true, Some(all[699].clone()));
        assert_eq!(again.next(10_000).await.unwrap(), all[700..]);
        // A board without a rank order in the store: its rows, sorted, walk the same.
        let mut rows = Walk::new(&ctx.store, &lb, dir, false, None);
        assert_eq!(rows.next(10_000).await.unwrap(), all);
        let mut rows = Walk::new(&ctx.store, &lb, dir, false, Some(all[699].clone()));
        assert_eq!(rows.next(500).await.unwrap(), all[700..1_200]);
        assert_eq!(rows.next(500).await.unwrap(), all[1_200..]);
    }
}
