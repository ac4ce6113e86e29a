//! Rolling windows (docs/schedules.md): a board whose standings count only
//! the results of the last `window` ("points in the last 24 hours", "best lap of the
//! last 7 days"). Its one board never closes; its results age out.
//!
//! A player's row keeps their results in time buckets of [`Rolling::width`]: a minute,
//! or a 2,048th of the window when that is longer (5 minutes for 7 days, 22 for 30), so
//! a row never keeps more than 2,049 buckets. A bucket keeps what its policy needs of
//! its results: SUM their sums, BEST and MIN the best, LATEST the last. A bucket leaves
//! the window once its newest possible result is `window` old ([`Rolling::expires_at`]):
//! a result counts for at least `window` and at most `window` plus a bucket's width.
//! The standing is the policy folded over the live buckets ([`Rolling::standing`]),
//! recomputed whenever a result comes in and whenever a bucket leaves (the minute's
//! sweep, `service::rolling`).

use serde::{Deserialize, Serialize};

use crate::board::{Board, Fold, Policy, Standing};
use crate::error::DomainError;
use crate::ids::MatchId;
use crate::score::Score;
use crate::tiebreak::{Columns, Ties};

/// The most buckets a window is cut into (a row keeps one more at most: the bucket
/// being filled when the oldest has not left yet).
pub const MAX_BUCKETS: i64 = 2_048;
const MINUTE_MS: i64 = 60_000;

/// One bucket of a player's results: what its policy keeps of the results whose time
/// falls in `[at, at + width)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    /// The bucket's start, ms since the epoch.
    #[serde(rename = "b")]
    pub at: i64,
    /// SUM: the results' sum; BEST/MIN: the best; LATEST: the last.
    #[serde(rename = "s")]
    pub score: Score,
    #[serde(rename = "t", default, skip_serializing_if = "Ties::is_empty")]
    pub ties: Ties,
    /// When that was reached (committed), ms: BEST and MIN standings take it as theirs.
    #[serde(rename = "r")]
    pub reached_at: i64,
    /// LATEST: the kept result's own time (its `event_ts`), to tell the last.
    #[serde(rename = "e", default, skip_serializing_if = "is_zero")]
    pub event_at: i64,
}

fn is_zero(v: &i64) -> bool {
    *v == 0
}

/// A rolling board's window and its buckets' width.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rolling {
    pub window: i64,
    pub width: i64,
}

/// A standing the buckets give: score, ties, and when it was reached (`None`: the
/// policy dates it now).
pub type Folded = (Score, Ties, Option<i64>);

impl Board {
    /// A rolling board's window and buckets (docs/schedules.md), if this board is one.
    /// (Here, beside [`Rolling`], so that the board's rules need not import these.)
    pub fn rolling(&self) -> Option<Rolling> {
        self.window.as_ref()?.rolling_ms.map(Rolling::of)
    }
}

impl Rolling {
    /// A window of `window_ms`, cut into buckets of a whole number of minutes.
    pub fn of(window_ms: i64) -> Self {
        let per_bucket = (window_ms + MAX_BUCKETS - 1) / MAX_BUCKETS;
        let minutes = (per_bucket + MINUTE_MS - 1) / MINUTE_MS;
        Self {
            window: window_ms,
            width: minutes.max(1) * MINUTE_MS,
        }
    }

    /// The start of the bucket a result of time `ts` falls in.
    pub fn bucket_of(&self, ts: i64) -> i64 {
        ts.div_euclid(self.width) * self.width
    }

    /// When the bucket starting at `at` leaves the window: once its newest possible
    /// result is a whole window old.
    pub fn expires_at(&self, at: i64) -> i64 {
        at + self.width + self.window
    }

    /// Whether a result of time `ts` still counts at `now` (its bucket has not left).
    pub fn counts(&self, ts: i64, now: i64) -> bool {
        now < self.expires_at(self.bucket_of(ts))
    }

    /// The buckets still in the window at `now`, oldest first.
    pub fn live(&self, buckets: &[Bucket], now: i64) -> Vec<Bucket> {
        let mut out: Vec<Bucket> = (buckets.iter())
            .filter(|b| now < self.expires_at(b.at))
            .cloned()
            .collect();
        out.sort_by_key(|b| b.at);
        out
    }

    /// When the first of `buckets` leaves, if any: the moment the standing next changes
    /// by itself.
    pub fn next_expiry(&self, buckets: &[Bucket]) -> Option<i64> {
        buckets.iter().map(|b| self.expires_at(b.at)).min()
    }

    /// `buckets` with one more result (`score`, `ties`, of time `ts`, committed at
    /// `now`) in its bucket, as `policy` keeps it: SUM adds, BEST and MIN keep the
    /// better (an equal result keeps the earlier), LATEST keeps the later by time.
    pub fn with(
        &self,
        policy: Policy,
        columns: &Columns,
        buckets: &[Bucket],
        (score, ties): (Score, &Ties),
        ts: i64,
        now: i64,
    ) -> Result<Vec<Bucket>, DomainError> {
        let at = self.bucket_of(ts);
        let fresh = Bucket {
            at,
            score,
            ties: ties.clone(),
            reached_at: now,
            event_at: if policy == Policy::Latest { ts } else { 0 },
        };
        let mut out: Vec<Bucket> = buckets.to_vec();
        match out.iter_mut().find(|b| b.at == at) {
            None => out.push(fresh),
            Some(b) => match policy {
                Policy::Sum => {
                    b.score = Score::new("score total", b.score.get() + score.get())?;
                    b.ties = columns.add(&b.ties, ties)?;
                    b.reached_at = now;
                }
                Policy::Best | Policy::Min => {
                    if better(policy, (score, ties), (b.score, &b.ties)) {
                        *b = fresh;
                    }
                }
                Policy::Latest => {
                    if ts >= b.event_at {
                        *b = fresh;
                    }
                }
            },
        }
        out.sort_by_key(|b| b.at);
        Ok(out)
    }

    /// The standing `policy` folds from `buckets` (oldest first), `None` when there are
    /// none: SUM the total (dated now), BEST and MIN the best bucket (dated when it was
    /// reached; an equal one later keeps the earlier), LATEST the newest (dated now).
    pub fn standing(
        policy: Policy,
        columns: &Columns,
        buckets: &[Bucket],
    ) -> Result<Option<Folded>, DomainError> {
        let Some(first) = buckets.first() else {
            return Ok(None);
        };
        Ok(Some(match policy {
            Policy::Sum => {
                let mut total = (first.score, first.ties.clone());
                for b in &buckets[1..] {
                    total = (
                        Score::new("score total", total.0.get() + b.score.get())?,
                        columns.add(&total.1, &b.ties)?,
                    );
                }
                (total.0, total.1, None)
            }
            Policy::Best | Policy::Min => {
                let mut best = first;
                for b in &buckets[1..] {
                    let equal = b.score == best.score && b.ties == best.ties;
                    if better(policy, (b.score, &b.ties), (best.score, &best.ties))
                        || (equal && b.reached_at < best.reached_at)
                    {
                        best = b;
                    }
                }
                (best.score, best.ties.clone(), Some(best.reached_at))
            }
            Policy::Latest => {
                let last = (buckets.iter())
                    .max_by_key(|b| (b.event_at, b.reached_at))
                    .unwrap_or(first);
                (last.score, last.ties.clone(), None)
            }
        }))
    }
}

/// What becomes of `current` now that the player's live buckets are `buckets`: the
/// standing they give ([`Rolling::standing`]) as a new version, dated as the policy
/// dates it (now, or when the best was reached), with `last_match` as its match; or
/// unchanged when it gives the same score and ties (the player keeps their place among
/// equals). `None` when no bucket is left: the player leaves the board.
pub fn refold(
    policy: Policy,
    columns: &Columns,
    current: Option<&Standing>,
    buckets: &[Bucket],
    last_match: &MatchId,
    now: i64,
) -> Result<Option<Fold>, DomainError> {
    let Some((score, ties, reached_at)) = Rolling::standing(policy, columns, buckets)? else {
        return Ok(None);
    };
    if current.is_some_and(|c| c.score == score && c.ties == ties) {
        return Ok(Some(Fold::Unchanged));
    }
    Ok(Some(Fold::Applied(Standing {
        score,
        ties,
        reached_at: reached_at.unwrap_or(now),
        version: current.map_or(1, |c| c.version + 1),
        last_match_id: last_match.clone(),
        metadata: current.and_then(|c| c.metadata.clone()),
    })))
}

/// Whether `a` is strictly better than `b` on a BEST (higher) or MIN (lower) board: the
/// score first, then the ties' bytes (the columns' order).
fn better(policy: Policy, a: (Score, &Ties), b: (Score, &Ties)) -> bool {
    let by_score = match policy {
        Policy::Min => a.0 < b.0,
        _ => a.0 > b.0,
    };
    by_score || (a.0 == b.0 && a.1.as_str() < b.1.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: i64) -> Score {
        Score::new("s", v).unwrap()
    }

    const H: i64 = 3_600_000;

    #[test]
    fn buckets_are_a_minute_or_a_2048th_of_the_window_in_whole_minutes() {
        assert_eq!(Rolling::of(H).width, MINUTE_MS);
        assert_eq!(Rolling::of(24 * H).width, MINUTE_MS);
        assert_eq!(Rolling::of(7 * 24 * H).width, 5 * MINUTE_MS);
        assert_eq!(Rolling::of(30 * 24 * H).width, 22 * MINUTE_MS);
        for window in [H, 34 * H, 7 * 24 * H, 30 * 24 * H] {
            let r = Rolling::of(window);
            assert!(r.window / r.width <= MAX_BUCKETS, "{window}");
        }
    }

    #[test]
    fn a_result_counts_for_at_least_the_window_and_at_most_a_bucket_more() {
        let r = Rolling::of(24 * H);
        let ts = 1_000 * MINUTE_MS + 30_000; // half a minute into a bucket
        assert!(r.counts(ts, ts + 24 * H - 1));
        assert!(r.counts(ts, ts + 24 * H));
        assert!(!r.counts(ts, ts + 24 * H + r.width));
        let last = r.expires_at(r.bucket_of(ts)) - ts;
        assert!((24 * H..=24 * H + r.width).contains(&last), "{last}");
    }

    #[test]
    fn each_policy_keeps_what_it_needs_and_folds_the_live_buckets() {
        let r = Rolling::of(H);
        let none = Ties::none();
        let c = Columns::NONE;
        let put = |p, bs: &[Bucket], v, ts, now| r.with(p, &c, bs, (s(v), &none), ts, now).unwrap();
        // SUM: one bucket adds up, two buckets too; the standing is the total.
        let b = put(Policy::Sum, &[], 5, 10_000, 10_000);
        let b = put(Policy::Sum, &b, 7, 20_000, 20_000);
        let b = put(Policy::Sum, &b, 1, 90_000, 90_000);
        assert_eq!(b.len(), 2);
        assert_eq!(
            Rolling::standing(Policy::Sum, &c, &b).unwrap().unwrap().0,
            s(13)
        );
        // After the first bucket leaves, only the second counts.
        let live = r.live(&b, r.expires_at(0));
        assert_eq!(
            Rolling::standing(Policy::Sum, &c, &live)
                .unwrap()
                .unwrap()
                .0,
            s(1)
        );
        assert_eq!(r.next_expiry(&b), Some(r.expires_at(0)));
        // BEST: the better per bucket, the best overall, dated when it was reached; an
        // equal result later keeps the earlier.
        let b = put(Policy::Best, &[], 5, 10_000, 11_000);
        let b = put(Policy::Best, &b, 9, 20_000, 21_000);
        let b = put(Policy::Best, &b, 9, 70_000, 71_000);
        let (score, _, at) = Rolling::standing(Policy::Best, &c, &b).unwrap().unwrap();
        assert_eq!((score, at), (s(9), Some(21_000)));
        let later = r.live(&b, r.expires_at(0));
        let (score, _, at) = Rolling::standing(Policy::Best, &c, &later)
            .unwrap()
            .unwrap();
        assert_eq!(
            (score, at),
            (s(9), Some(71_000)),
            "the 9 of the next minute"
        );
        // MIN: the lower.
        let b = put(Policy::Min, &[], 5, 10_000, 10_000);
        let b = put(Policy::Min, &b, 3, 20_000, 20_000);
        assert_eq!(
            Rolling::standing(Policy::Min, &c, &b).unwrap().unwrap().0,
            s(3)
        );
        // LATEST: the latest by the result's own time, whatever order they came in.
        let b = put(Policy::Latest, &[], 5, 20_000, 30_000);
        let b = put(Policy::Latest, &b, 3, 10_000, 40_000);
        let b = put(Policy::Latest, &b, 8, 70_000, 50_000);
        assert_eq!(
            Rolling::standing(Policy::Latest, &c, &b)
                .unwrap()
                .unwrap()
                .0,
            s(8)
        );
        assert_eq!(
            Rolling::standing(Policy::Latest, &c, &b[..1])
                .unwrap()
                .unwrap()
                .0,
            s(5)
        );
        assert_eq!(Rolling::standing(Policy::Sum, &c, &[]).unwrap(), None);
    }

    #[test]
    fn a_sum_leaving_the_exact_range_is_refused() {
        let r = Rolling::of(H);
        let c = Columns::NONE;
        let b = r
            .with(
                Policy::Sum,
                &c,
                &[],
                (s(crate::score::MAX_ABS_SCORE), &Ties::none()),
                0,
                0,
            )
            .unwrap();
        assert!(
            r.with(Policy::Sum, &c, &b, (s(1), &Ties::none()), 0, 0)
                .is_err()
        );
    }
}
