//! The figures the use cases record, through the `metrics` facade: which recorder writes
//! them (CloudWatch Embedded Metric Format lines on stdout, in a Lambda function) is the
//! wiring's choice (`leaderboard::wiring::metrics`); tools and tests that call the use
//! cases record into the facade's no-op recorder. The names, their dimensions and the
//! alarms on them: docs/runbook.md.
//!
//! Two kinds of figures, flushed differently:
//! - [`count`]: what an invocation did that an alarm or an operator must see even if the
//!   container is never invoked again (a batch's outcome, a 5xx reply, a scheduled
//!   run); written at the end of that invocation ([`take_urgent`] says one waits).
//! - [`tally`]: per-request business counts on the hot path (results accepted,
//!   improved); summed in the container and written at most every [`TALLY_EVERY`], so
//!   a busy function writes one line per container per interval, not one per request.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Namespace of every metric this service emits.
pub const NAMESPACE: &str = "Leaderboard";

/// How long per-request tallies may wait in a container before they are written.
pub const TALLY_EVERY: Duration = Duration::from_secs(10);

/// Whether a [`count`] is waiting to be written at the end of this invocation.
static URGENT: AtomicBool = AtomicBool::new(false);

/// Whether a [`count`] was recorded since the last call (and forgets it): the recorder
/// writes at the end of an invocation when one was.
pub fn take_urgent() -> bool {
    URGENT.swap(false, Ordering::Relaxed)
}

/// Adds `counts` (name, value), written when this invocation ends. A zero is recorded
/// too: a run that did nothing still says it ran, and a metric an alarm watches exists
/// from the first run of its function.
pub fn count(counts: &[(&'static str, u64)]) {
    for (name, value) in counts {
        metrics::counter!(*name).increment(*value);
    }
    URGENT.store(true, Ordering::Relaxed);
}

/// A run of work that must happen (the seal, the sweep): `runs` gains 1 (its heartbeat,
/// alarmed when missing) and `failures` 1 or 0, so a failing run still beats.
pub fn run(runs: &'static str, failures: &'static str, failed: bool) {
    count(&[(runs, 1), (failures, u64::from(failed))]);
}

/// Adds `value` to `name` with the dimensions `labels`, written when this invocation ends.
pub fn count_by(name: &'static str, labels: &[(&'static str, String)], value: u64) {
    let labels: Vec<metrics::Label> = labels
        .iter()
        .map(|(k, v)| metrics::Label::new(*k, v.clone()))
        .collect();
    metrics::counter!(name, labels).increment(value);
    URGENT.store(true, Ordering::Relaxed);
}

/// Sets the gauge `name` (its last value in the invocation is written when it ends).
pub fn gauge(name: &'static str, value: f64) {
    metrics::gauge!(name).set(value);
    URGENT.store(true, Ordering::Relaxed);
}

/// Adds `value` to the per-request tally `name` (written within [`TALLY_EVERY`]).
pub fn tally(name: &'static str, value: u64) {
    metrics::counter!(name).increment(value);
}

/// Adds `value` to the tally `name` of `game` (the dimension `Game`: the console's
/// overview reads a game's traffic by it). A container serves few games, so it writes
/// few series.
pub fn tally_game(name: &'static str, game: &str, value: u64) {
    metrics::counter!(name, "Game" => game.to_owned()).increment(value);
}
