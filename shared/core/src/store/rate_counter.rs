//! [`RateCounter`]: shared fixed-window counters for the read limits.

use std::future::Future;

use crate::store::IndexError;

/// Shared counters for rate limits (fixed windows that start with their first hit).
pub trait RateCounter: Send + Sync {
    /// Counts one hit on each key; per key, the hits in its current window and the ms
    /// until that window ends. One round trip.
    fn hit(
        &self,
        keys: &[String],
        window: std::time::Duration,
    ) -> impl Future<Output = Result<Vec<(u64, u64)>, IndexError>> + Send;
}
