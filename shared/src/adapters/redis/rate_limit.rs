//! [`RateCounter`] over Redis: one fixed-window counter per key, counted in one script
//! per key, one pipeline per cluster slot.

use std::time::Duration;

use tracing::instrument;

use super::calls::{Call, Hit};
use super::{RedisRankIndex, keys};
use leaderboard_core::store::IndexError;
use leaderboard_core::store::RateCounter;

impl RateCounter for RedisRankIndex {
    #[instrument(skip(self))]
    async fn hit(&self, keys: &[String], window: Duration) -> Result<Vec<(u64, u64)>, IndexError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let counters: Vec<String> = keys
            .iter()
            .map(|k| keys::rate_counter(&self.prefix, k))
            .collect();
        let replies: Vec<(u64, i64)> = self
            .per_slot(&counters, Some(&self.scripts.hit), |pipe, i| {
                let call = Hit {
                    counter: &counters[i],
                    window_ms: window.as_millis() as u64,
                };
                pipe.invoke_script(&call.invocation(&self.scripts));
            })
            .await?;
        Ok(replies
            .into_iter()
            .map(|(n, ttl)| (n, ttl.max(0) as u64))
            .collect())
    }
}
