//! Counting on a board served from DynamoDB at a bounded cost: exact below
//! [`COUNT_CAP`], estimated from the board's rank sketch past it.

use std::collections::HashSet;

use crate::service::ServiceError;
use crate::store::{Count, RankSketch, RankedReads, SketchStore};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, tie_floor};

/// Entries a count served from DynamoDB reads at most, across the board's 16 shards.
/// Below it counts are exact (the best few thousand players get their exact rank); past
/// it a rank or total is estimated from the board's rank sketch. So a read served from
/// DynamoDB costs a bounded amount whatever the board's size (docs/design.md states the bound
/// in read capacity units).
pub const COUNT_CAP: u64 = 4_096;

/// Where a key stands on a board read from DynamoDB: counted while cheap, estimated from
/// the board's sketch past [`COUNT_CAP`].
pub(crate) struct Estimate {
    /// Entries before the key.
    pub before: u64,
    pub total: u64,
    pub rank_approximate: bool,
    pub total_approximate: bool,
}

/// The entries before `key` (none asked for: 0) and the board's size, from DynamoDB.
/// A rank past the cap needs the board's sketch (none yet: `rank_unavailable`); a total
/// past it is the sketch's, or the lower bound counted when there is none.
pub(super) async fn estimate<S: RankedReads + SketchStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    key: Option<&RankKey>,
) -> Result<Estimate, ServiceError> {
    let none = Count { n: 0, exact: true };
    let (before, total) = futures::try_join!(
        async {
            match key {
                Some(k) => {
                    store
                        .count_before(BoardOrder::new(lb, dir), Some(k), COUNT_CAP)
                        .await
                }
                None => Ok(none),
            }
        },
        store.count_before(BoardOrder::new(lb, dir), None, COUNT_CAP),
    )?;
    if before.exact && total.exact {
        return Ok(Estimate {
            before: before.n,
            total: total.n,
            rank_approximate: false,
            total_approximate: false,
        });
    }
    let sketch = store.get_sketch(lb).await?;
    let before_n = match key {
        Some(k) => before_from(lb, dir, k, before, sketch.as_ref())?,
        None => before.n,
    };
    let total_n = match (&sketch, total.exact) {
        (_, true) => total.n,
        (Some(sk), false) => sk.total.max(total.n),
        (None, false) => total.n,
    };
    Ok(Estimate {
        before: before_n,
        total: total_n.max(before_n + u64::from(key.is_some())),
        rank_approximate: !before.exact,
        total_approximate: !total.exact,
    })
}

/// The entries before `key` given what a capped count found: the count while exact, the
/// board's sketch past the cap (none yet: `rank_unavailable`).
fn before_from(
    lb: &LeaderboardId,
    dir: Direction,
    key: &RankKey,
    counted: Count,
    sketch: Option<&RankSketch>,
) -> Result<u64, ServiceError> {
    match (counted.exact, sketch) {
        (true, _) => Ok(counted.n),
        (false, Some(sk)) => Ok(sk.before(&key.sort_key(dir)).max(counted.n)),
        (false, None) => Err(ServiceError::RankUnavailable(lb.clone())),
    }
}

/// The place under `mode` of `first`, a key `est` says stands after `est.before` entries,
/// on a board read from DynamoDB; and whether it is an estimate.
/// - competition: the entries before the first key of `first`'s score and tie-break
///   values, counted as [`estimate`] counts (exact below the cap, from the sketch past it);
/// - dense: the distinct scores (with their tie-break values) among the entries before `first`, read while they are
///   exactly known and no more than [`COUNT_CAP`]; past it no bounded read can know
///   them, so `rank_unavailable` (503) rather than a wrong place.
pub(super) async fn place<S: RankedReads + SketchStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    first: &RankKey,
    est: &Estimate,
    mode: RankMode,
) -> Result<(u64, bool), ServiceError> {
    if est.before == 0 || mode == RankMode::Unique {
        return Ok((est.before + 1, est.rank_approximate));
    }
    match mode {
        RankMode::Competition => {
            // Only the entries before the score's first key: the total is known already.
            let floor = tie_floor(first);
            let counted = store
                .count_before(BoardOrder::new(lb, dir), Some(&floor), COUNT_CAP)
                .await?;
            let sketch = match counted.exact {
                true => None,
                false => store.get_sketch(lb).await?,
            };
            let before = before_from(lb, dir, &floor, counted, sketch.as_ref())?;
            Ok((before + 1, !counted.exact))
        }
        _ if est.rank_approximate || est.before > COUNT_CAP => {
            Err(ServiceError::RankUnavailable(lb.clone()))
        }
        _ => {
            let above = store
                .ranked_before(BoardOrder::new(lb, dir), first, est.before)
                .await?;
            // Distinct tuples: the score and the tie-break values.
            let better: HashSet<(i64, &str)> = above
                .iter()
                .filter(|k| !k.ties_with(first))
                .map(|k| (k.score.get(), k.ties.as_str()))
                .collect();
            Ok((better.len() as u64 + 1, false))
        }
    }
}
