//! A page of the board in rank order read from DynamoDB's rank-ordered index, while the
//! rank index cannot answer or a closed window's keys have left it (the walks' rules:
//! `pages`). Its stamps are the entries' reach times.

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{PageAt, RankedReads, SketchStore};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start};

use super::estimate::{COUNT_CAP, estimate, place};
use super::reply::{Provenance, Source};
use leaderboard_rules::time::now_us;

/// A page as read, before it becomes a reply.
pub(super) struct Page {
    /// Where the page's first key stands.
    pub(super) start: Start,
    pub(super) keys: Vec<RankKey>,
    /// Per key, when it took its place (see the module's doc).
    pub(super) stamps: Vec<i64>,
    /// The clock of the read, on the stamps' clock.
    pub(super) clock: i64,
    pub(super) total: u64,
    /// Whether entries lie past the page's last key, when the read itself says so:
    /// a forward page from DynamoDB, full or short. `None`: from the page's place and
    /// the total, read together with it (Redis).
    pub(super) more_after: Option<bool>,
    pub(super) meta: Provenance,
}

/// A page read from DynamoDB's rank-ordered index. Stamps are reach times (see the
/// module's doc); a page at a rank past [`COUNT_CAP`] starts from the board's rank
/// sketch, and says its ranks are approximate.
pub(super) async fn page_from_store<S: RankedReads + SketchStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    at: PageAt<'_>,
    limit: u64,
    mode: RankMode,
    degraded: bool,
) -> Result<Page, ServiceError> {
    let clock = now_us();
    let keys = match at {
        PageAt::Top => {
            ctx.store
                .ranked_after(BoardOrder::new(lb, dir), None, limit)
                .await?
        }
        PageAt::After(k) => {
            ctx.store
                .ranked_after(BoardOrder::new(lb, dir), Some(k), limit)
                .await?
        }
        PageAt::Before(k) => {
            ctx.store
                .ranked_before(BoardOrder::new(lb, dir), k, limit)
                .await?
        }
        PageAt::Rank(r) => keys_from_rank(ctx, lb, dir, r, limit).await?,
    };
    // From the top, or from a rank counted from it, the keys' place is known by how they
    // were read; counting the entries before them again could meet a player who moved
    // in between (a top page starting at rank 2).
    let counted = match at {
        PageAt::Top => Some(0),
        PageAt::Rank(r) if r <= COUNT_CAP => Some(r),
        _ => None,
    };
    let (start, total, meta) = match keys.first() {
        Some(k) => {
            let mut est =
                estimate(&ctx.store, lb, dir, Some(k).filter(|_| counted.is_none())).await?;
            if let Some(before) = counted {
                est.before = before;
                est.total = est.total.max(before + keys.len() as u64);
            }
            let (first_place, approximate) = place(&ctx.store, lb, dir, k, &est, mode).await?;
            let mut meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
            meta.rank_approximate = approximate;
            let start = Start {
                rank: est.before + 1,
                place: first_place,
            };
            (start, est.total, meta)
        }
        None => {
            let est = estimate(&ctx.store, lb, dir, None).await?;
            let meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
            let rank = match at {
                PageAt::Rank(r) => r.min(est.total) + 1,
                PageAt::Top | PageAt::Before(_) => 1,
                PageAt::After(_) => est.total + 1,
            };
            (Start { rank, place: rank }, est.total, meta)
        }
    };
    // The page's place and the total are counted by reads after the page's own, so
    // under writes they can be off by the players who moved in between: a mover counted
    // before the page's first key made a page that stopped short of the end look like the
    // last one, and the walk dropped a player who never moved. Walking forward, only a
    // short page is the last.
    let more_after = match at {
        PageAt::Before(_) => None,
        _ => Some(keys.len() as u64 >= limit),
    };
    Ok(Page {
        start,
        stamps: keys
            .iter()
            .map(|k| k.reached_at.saturating_mul(1_000))
            .collect(),
        keys,
        clock,
        total,
        more_after,
        meta,
    })
}

/// Up to `limit` keys from the 0-based rank `rank`, read from DynamoDB: counted from the
/// top while that reads at most [`COUNT_CAP`] entries, else from the nearest mark of the
/// board's rank sketch before it (no sketch, or the mark too far: `rank_unavailable`).
async fn keys_from_rank<S: RankedReads + SketchStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    rank: u64,
    limit: u64,
) -> Result<Vec<RankKey>, ServiceError> {
    let (after, skip) = match rank <= COUNT_CAP {
        true => (None, rank),
        false => {
            let sketch = ctx.store.get_sketch(lb).await?;
            // The last mark before the rank: the entries after it start one rank later.
            let mark = sketch.as_ref().and_then(|sk| {
                let i = sk.ranks.partition_point(|&r| r < rank).checked_sub(1)?;
                let key = RankKey::from_sort_key(dir, sk.keys.get(i)?)?;
                Some((key, rank - sk.ranks[i] - 1))
            });
            match mark {
                Some((key, gap)) if gap <= COUNT_CAP => (Some(key), gap),
                _ => return Err(ServiceError::RankUnavailable(lb.clone())),
            }
        }
    };
    let mut keys = ctx
        .store
        .ranked_after(BoardOrder::new(lb, dir), after.as_ref(), skip + limit)
        .await?;
    let skip = (skip as usize).min(keys.len());
    Ok(keys.split_off(skip))
}
