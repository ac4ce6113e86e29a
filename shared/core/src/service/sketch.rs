//! Rank sketches of big boards (see [`RankSketch`]): taken from the index by the sweep,
//! at most every [`SKETCH_EVERY`], for boards bigger than [`COUNT_CAP`] (smaller ones are
//! counted exactly), so that a read served from DynamoDB can place a player anywhere on a
//! board of any size at a bounded cost. With [`MARKS`] marks an estimated rank is off by
//! at most `total / (2 * MARKS)` (0.05% of the board), plus what changed since the sketch.

use std::time::Duration;

use tracing::{info, instrument};

use super::Context;
use super::reads::COUNT_CAP;
use crate::service::ServiceError;
use crate::store::{IndexUpkeep, RankSketch, SketchStore};
use leaderboard_rules::board::Board;
use leaderboard_rules::time::now_ms;

/// Marks per sketch (a sketch item of about 60 KB).
pub const MARKS: u64 = 1_024;
/// How old a sketch may get before the sweep takes a new one.
pub const SKETCH_EVERY: Duration = Duration::from_secs(600);

/// Whether `sketch` is old enough to be taken again.
fn due(sketch: Option<&RankSketch>, now: i64) -> bool {
    sketch.is_none_or(|s| now - s.at >= SKETCH_EVERY.as_millis() as i64)
}

/// Takes and stores `board`'s sketch if it is due and the board is big enough to need
/// one; returns whether it stored one. The board's index must be ready.
#[instrument(skip_all, fields(board = %board.leaderboard_id))]
pub async fn refresh<S: SketchStore, I: IndexUpkeep>(
    ctx: &Context<S, I>,
    board: &Board,
) -> Result<bool, ServiceError> {
    let lb = &board.leaderboard_id;
    if !due(ctx.store.get_sketch(lb).await?.as_ref(), now_ms()) {
        return Ok(false);
    }
    let sketch = ctx.index.sketch(board.order(), MARKS, COUNT_CAP).await?;
    if sketch.ranks.is_empty() {
        return Ok(false);
    }
    ctx.store.put_sketch(lb, &sketch).await?;
    info!(
        total = sketch.total,
        marks = sketch.ranks.len(),
        "rank sketch taken"
    );
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(total: u64, marks: u64) -> RankSketch {
        // Entry r has sort key "k{r:06}", so keys order like ranks.
        let ranks: Vec<u64> = (0..marks).map(|i| i * total / marks).collect();
        RankSketch {
            at: 0,
            total,
            keys: ranks.iter().map(|r| format!("k{r:06}")).collect(),
            ranks,
        }
    }

    #[test]
    fn an_estimate_is_within_half_a_gap_of_the_true_rank() {
        let s = sketch(100_000, 1_024);
        let gap = 100_000 / 1_024 + 1;
        for truth in [0_u64, 1, 97, 98, 5_000, 50_001, 99_998, 99_999] {
            let est = s.before(&format!("k{truth:06}"));
            assert!(est.abs_diff(truth) <= gap / 2 + 1, "{truth}: {est}");
        }
        // On a mark exactly: the mark's own rank (nothing between it and itself).
        assert_eq!(s.before("k000000"), 0);
        // Past the last mark: between it and the board's end.
        assert!(s.before("z") <= 100_000);
    }

    #[test]
    fn sketches_are_taken_again_only_when_old() {
        let mut s = sketch(10, 2);
        s.at = 1_000;
        assert!(due(None, 0));
        assert!(!due(Some(&s), 1_000 + 1));
        assert!(due(Some(&s), 1_000 + SKETCH_EVERY.as_millis() as i64));
    }
}
