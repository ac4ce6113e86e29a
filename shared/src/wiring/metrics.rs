//! The recorder behind the use cases' metrics (`leaderboard_core::service::metrics`):
//! Embedded Metric Format lines on stdout, written by `metrics_cloudwatch_embedded`, which
//! Lambda's log pipeline turns into metrics (namespace `Leaderboard`) without an API call
//! on the hot path. Counts are written when the invocation that recorded them ends,
//! tallies at most every `TALLY_EVERY` (see [`flush`]).

use std::sync::Mutex;
use std::sync::OnceLock;
use std::time::Instant;

use leaderboard_core::service::metrics::{NAMESPACE, TALLY_EVERY, take_urgent};
use metrics_cloudwatch_embedded::Collector;

/// The collector, installed once per process by [`init`] when running as a Lambda
/// function (the log pipeline that reads EMF exists only there; tools and tests that
/// call the use cases record into the facade's no-op recorder).
static COLLECTOR: OnceLock<&'static Collector> = OnceLock::new();
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

/// At the end of an invocation: writes what was recorded if a [`count`](leaderboard_core::service::metrics::count) is waiting or
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
    let urgent = take_urgent();
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
    use leaderboard_core::service::metrics::{count, count_by, tally, tally_game};

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
