//! The seal function's tunables from the configuration: sealing's and resets'.

use std::time::Duration;

use leaderboard_core::service::Settings;
use leaderboard_core::service::seal::SealSettings;
use leaderboard_core::service::seal::reset::ResetSettings;

use crate::wiring::config::Config;

/// Sealing's tunables from the configuration.
pub fn seal_settings(c: &Config) -> SealSettings {
    SealSettings {
        settle: c.seal_settle.unwrap_or(SealSettings::default().settle),
    }
}

/// Resets' tunables from the configuration: the fence one board-cache lifetime
/// (`BOARD_CACHE_TTL_MS`, the same for every function) and a second of clock skew after
/// the request, the seal's settle time, Redis's retention of a closed window.
pub fn reset_settings(c: &Config) -> ResetSettings {
    let d = Settings::default();
    let cache = c.board_cache_ttl.unwrap_or(d.board_cache_ttl);
    ResetSettings {
        fence_delay: cache + Duration::from_secs(1),
        settle: seal_settings(c).settle,
        redis_retention: c.redis_retention.unwrap_or(d.redis_retention),
    }
}
