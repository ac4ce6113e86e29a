//! Logging setup shared by every function: `tracing` events as JSON lines (what
//! CloudWatch's JSON log format expects), each with its own UTC timestamp (so a local
//! stack's logs can be lined up across functions), level from `RUST_LOG` (default
//! `info`).
//!
//! `RUST_LOG` takes a level and per-target levels (`warn`, `info,leaderboard::redis=debug`):
//! `Targets`, not `EnvFilter`, whose span and field filters would link a regex engine
//! into every function for a feature no one here uses.

use tracing_subscriber::filter::Targets;
use tracing_subscriber::prelude::*;

/// The filter `RUST_LOG` spells; `info` when it is unset or does not parse.
fn filter(spec: Option<&str>) -> Targets {
    spec.and_then(|s| s.parse().ok())
        .unwrap_or_else(|| Targets::new().with_default(tracing::Level::INFO))
}

/// Installs the global subscriber. Call once, first thing in `main`.
pub fn init() {
    let spec = std::env::var("RUST_LOG").ok();
    let fmt = tracing_subscriber::fmt::layer()
        .json()
        .with_current_span(false)
        .with_ansi(false)
        .with_target(false);
    tracing_subscriber::registry()
        .with(fmt)
        .with(filter(spec.as_deref()))
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracing::Level;

    #[test]
    fn rust_log_levels_and_targets() {
        let f = filter(Some("warn"));
        assert!(f.would_enable("leaderboard::service", &Level::WARN));
        assert!(!f.would_enable("leaderboard::service", &Level::INFO));
        let f = filter(Some("info,leaderboard::redis=debug"));
        assert!(f.would_enable("leaderboard::redis::link", &Level::DEBUG));
        assert!(!f.would_enable("leaderboard::service", &Level::DEBUG));
        assert!(f.would_enable("leaderboard::service", &Level::INFO));
        for unset in [None, Some("not a=level=spec")] {
            let f = filter(unset);
            assert!(f.would_enable("x", &Level::INFO));
            assert!(!f.would_enable("x", &Level::DEBUG));
        }
    }
}
