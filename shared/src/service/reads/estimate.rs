//! Counting on a board served from DynamoDB at a bounded cost: exact below
//! [`COUNT_CAP`], estimated from the board's rank sketch past it.

use crate::error::ServiceError;
use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey};
use crate::store::{Count, ScoreStore};

/// Entries a count served from DynamoDB reads at most, across the board's 16 shards.
/// Below it counts are exact (the best few thousand players get their exact rank); past
/// it a rank or total is estimated from the board's rank sketch. So a read served from
/// DynamoDB costs a bounded amount whatever the board's size (the README states the bound
/// in read capacity units).
pub const COUNT_CAP: u64 = 4_096;

/// Where a key stands on a board read from DynamoDB: counted while cheap, estimated from
/// the board's sketch past [`COUNT_CAP`].
pub(super) struct Estimate {
    /// Entries before the key.
    pub before: u64,
    pub total: u64,
    pub rank_approximate: bool,
    pub total_approximate: bool,
}

/// The entries before `key` (none asked for: 0) and the board's size, from DynamoDB.
/// A rank past the cap needs the board's sketch (none yet: `rank_unavailable`); a total
/// past it is the sketch's, or the lower bound counted when there is none.
pub(super) async fn estimate<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    key: Option<&RankKey>,
) -> Result<Estimate, ServiceError> {
    let none = Count { n: 0, exact: true };
    let (before, total) = futures::try_join!(
        async {
            match key {
                Some(k) => store.count_before(lb, dir, Some(k), COUNT_CAP).await,
                None => Ok(none),
            }
        },
        store.count_before(lb, dir, None, COUNT_CAP),
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
    let before_n = match (before.exact, key, &sketch) {
        (true, _, _) | (_, None, _) => before.n,
        (false, Some(k), Some(sk)) => sk.before(&k.sort_key(dir)).max(before.n),
        (false, Some(_), None) => return Err(ServiceError::RankUnavailable(lb.clone())),
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
