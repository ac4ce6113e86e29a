//! CloudWatch metrics through the `metrics` facade, written as Embedded Metric Format
//! lines on stdout by `metrics_cloudwatch_embedded`: Lambda's log pipeline turns them
//! into metrics (namespace `Leaderboard`) without an API call on the hot path. The
//! names, their dimensions and the alarms on them: docs/runbook.md.
//!
//! Two kinds of figures, flushed differently (see [`flush`]):
//! - [`count`]: what an invocation did that an alarm or an operator must see even if the
//!   container is never invoked again (a batch's outcome, a 5xx reply, a scheduled
//!   run); written at the end of that invocation.
//! - [`tally`]: per-request business counts on the hot path (results accepted,
//!   improved); summed in the container and written at most every [`TALLY_EVERY`], so
//!   a busy function writes one line per container per interval, not one per request.

use std::sync::Mutex;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use metrics_cloudwatch_embedded::Collector;

/// Namespace of every metric this service emits.
pub(crate) const NAMESPACE: &str = "Leaderboard";

/// How long per-request tallies may wait in a container before they are written.
pub const TALLY_EVERY: Duration = Duration::from_secs(10);

/// The collector, installed once per process by [`init`] when running as a Lambda
/// function (the log pipeline that reads EMF exists only there; tools and tests that
/// call the use cases record into the facade's no-op recorder).
static COLLECTOR: OnceLock<&'static Collector> = OnceLock::new();
/// Whether a [`count`] is waiting to be written at the end of this invocation.
static URGENT: AtomicBool = AtomicBool::new(false);
static LAST_FLUSH: Mutex<Option<Instant>> = Mutex::new(None);

/// Installs the recorder if `AWS_LAMBDA_FUNCTION_NAME` is set. Call once, first thing.
pub fn init() {
    if std::env::var_os("AWS_LAMBDA_FUNCTION_NAME").is_some() {
        install();
    }
}

/// Installs the recorder (the process's global one).
fn install() {
    match metrics_cloudwatch_embedded::Builder::new()
        .cloudwatch_namespace(NAMESPACE)
        // A counter recorded once is written on every flush after, zero or not: an
        // alarm on it sees 0, not missing data, while its function runs.
        .emit_zeros(true)
        .init()
    {
        Ok(collector) => {
            let _ = COLLECTOR.set(collector);
            metrics::describe_gauge!(
                "SealLagSeconds",
                metrics::Unit::Seconds,
                "how far past its settle time the most overdue unsealed window is"
            );
        }
        Err(error) => tracing::warn!(%error, "metrics recorder not installed"),
    }
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

/// At the end of an invocation: writes what was recorded if a [`count`] is waiting or
/// the last write is [`TALLY_EVERY`] old. A counter's line carries what it gained since
/// the last write.
pub fn flush() {
    flush_to(|| std::io::stdout().lock());
}

/// [`flush`] to the writer `out` opens, opened only when something is written.
fn flush_to<W: std::io::Write>(out: impl FnOnce() -> W) {
    let Some(collector) = COLLECTOR.get() else {
        return;
    };
    let urgent = URGENT.swap(false, Ordering::Relaxed);
    let mut last = LAST_FLUSH.lock().unwrap_or_else(|e| e.into_inner());
    let now = Instant::now();
    let due = last.is_none_or(|at| now.duration_since(at) >= TALLY_EVERY);
    if !(urgent || due) {
        return;
    }
    *last = Some(now);
    if let Err(error) = collector.flush(out()) {
        tracing::warn!(%error, "metrics not written");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What one flush wrote: each EMF line's values by metric name (dimensions aside).
    fn flushed() -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        flush_to(|| &mut out);
        let text = String::from_utf8(out).unwrap_or_default();
        text.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    fn value(lines: &[serde_json::Value], name: &str) -> Option<u64> {
        lines.iter().find_map(|l| l[name].as_u64())
    }

    /// One test: the recorder is the process's (nextest runs each test in a process of
    /// its own; under `cargo test` nothing else in this crate's tests records).
    #[test]
    fn counts_are_written_when_the_invocation_ends_and_tallies_at_most_every_interval() {
        install();
        // The first invocation writes (nothing written yet): a count and a tally.
        count(&[("SealRuns", 1), ("SealRunFailures", 0)]);
        tally("ResultsAccepted", 1);
        let first = flushed();
        assert_eq!(value(&first, "SealRuns"), Some(1));
        assert_eq!(
            value(&first, "SealRunFailures"),
            Some(0),
            "a zero is written"
        );
        assert_eq!(value(&first, "ResultsAccepted"), Some(1));
        let doc = &first[0]["_aws"]["CloudWatchMetrics"][0];
        assert_eq!(doc["Namespace"], NAMESPACE);
        // Tallies alone wait for the interval: nothing is written, nothing is lost.
        tally("ResultsAccepted", 2);
        assert!(flushed().is_empty());
        // A count makes the next end of an invocation write, the waiting tally with it.
        tally_game("Reads", "g1", 3);
        count_by("ServerErrorReplies", &[("Route", "GET /x".to_owned())], 1);
        let third = flushed();
        assert_eq!(value(&third, "ResultsAccepted"), Some(2));
        // Each labelled figure on a line of its own, its label the line's dimension.
        for (dim, label, name, want) in [
            ("Game", "g1", "Reads", 3),
            ("Route", "GET /x", "ServerErrorReplies", 1),
        ] {
            let line = (third.iter().find(|l| l[dim] == label)).expect("a line by its label");
            assert_eq!(line[name], want, "{line}");
            assert_eq!(
                line["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0][0],
                dim
            );
        }
        // Written counters go on being written (as zeros) on later flushes.
        count(&[("SealRuns", 1)]);
        let fourth = flushed();
        assert_eq!(value(&fourth, "SealRuns"), Some(1));
        assert_eq!(value(&fourth, "ResultsAccepted"), Some(0));
    }
}
