//! Per-player and per-IP read limits, counted in Redis and shared by every container.

use std::time::Duration;

use tracing::warn;

use crate::service::ServiceError;
use crate::store::RateCounter;
use leaderboard_rules::caller::Caller;

/// Read limits per fixed window; 0 turns a limit off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimits {
    pub per_player: u64,
    pub per_ip: u64,
    pub window: Duration,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            per_player: 20,
            per_ip: 200,
            window: Duration::from_secs(1),
        }
    }
}

impl RateLimits {
    /// Counts one read by `caller` and refuses it when a limit is exceeded. When the
    /// counters cannot be reached the read goes ahead: the limiter protects the
    /// service, it must not become the reason reads fail.
    pub async fn check<C: RateCounter>(
        &self,
        counter: &C,
        caller: &Caller,
    ) -> Result<(), ServiceError> {
        let mut keys = Vec::with_capacity(2);
        let mut limits = Vec::with_capacity(2);
        if let (Some(p), true) = (&caller.player, self.per_player > 0) {
            keys.push(format!("p:{p}"));
            limits.push(self.per_player);
        }
        if let (Some(ip), true) = (&caller.ip, self.per_ip > 0) {
            keys.push(format!("ip:{ip}"));
            limits.push(self.per_ip);
        }
        if keys.is_empty() {
            return Ok(());
        }
        let counts = match counter.hit(&keys, self.window).await {
            Ok(c) => c,
            Err(error) => {
                warn!(%error, "rate-limit counters unavailable; letting the read through");
                return Ok(());
            }
        };
        let wait_ms = counts
            .iter()
            .zip(&limits)
            .filter(|((hits, _), limit)| hits > limit)
            .map(|((_, ttl_ms), _)| *ttl_ms)
            .max();
        match wait_ms {
            Some(ms) => Err(ServiceError::RateLimited {
                retry_after_s: ms.div_ceil(1000).max(1),
            }),
            None => Ok(()),
        }
    }
}
