//! The circuit breaker that keeps a dead or silent Redis from costing every request its
//! full timeout: after [`THRESHOLD`] consecutive outages (timeouts, refused or dropped
//! connections), or at once when a connection cannot even be opened, calls fail
//! immediately for [`COOLDOWN`]; after it, calls go through again and the next failures
//! count anew.

use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::Duration;

use tracing::warn;

use leaderboard_core::store::IndexError;
use leaderboard_rules::time::now_ms;

/// Consecutive outages that open the breaker.
pub const THRESHOLD: u32 = 3;
/// How long an open breaker refuses calls.
pub const COOLDOWN: Duration = Duration::from_millis(1_000);

#[derive(Default)]
pub(crate) struct Breaker {
    failures: AtomicU32,
    open_until_ms: AtomicI64,
}

impl Breaker {
    /// Refuses the call while open.
    pub fn check(&self) -> Result<(), IndexError> {
        if now_ms() < self.open_until_ms.load(Ordering::Relaxed) {
            return Err(IndexError::CircuitOpen);
        }
        Ok(())
    }

    /// Counts an outage, or resets on anything else: a Redis that answers, even with an
    /// error, is up. True when this outage opened the breaker.
    pub fn record(&self, outage: bool) -> bool {
        if !outage {
            self.failures.store(0, Ordering::Relaxed);
            return false;
        }
        if self.failures.fetch_add(1, Ordering::Relaxed) + 1 >= THRESHOLD {
            self.trip("consecutive timeouts");
            return true;
        }
        false
    }

    /// Opens the breaker now (a connection could not be opened: `why` says what failed).
    pub fn trip(&self, why: &str) {
        self.failures.store(0, Ordering::Relaxed);
        let until = now_ms() + COOLDOWN.as_millis() as i64;
        self.open_until_ms.store(until, Ordering::Relaxed);
        warn!(
            cooldown_ms = COOLDOWN.as_millis() as u64,
            why, "Redis circuit breaker opened"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_an_answer_resets_the_count() {
        let b = Breaker::default();
        for _ in 0..THRESHOLD - 1 {
            assert!(!b.record(true));
        }
        assert!(!b.record(false));
        assert!(!b.record(true));
        assert!(b.check().is_ok(), "the count restarted after an answer");
        for _ in 0..THRESHOLD - 2 {
            assert!(!b.record(true));
        }
        assert!(b.record(true), "the outage that opens it says so");
        assert!(matches!(b.check(), Err(IndexError::CircuitOpen)));
    }

    #[test]
    fn a_trip_opens_at_once() {
        let b = Breaker::default();
        b.trip("test");
        assert!(matches!(b.check(), Err(IndexError::CircuitOpen)));
    }
}
