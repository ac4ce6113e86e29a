//! Logging setup shared by every function: `tracing` events as JSON lines (what
//! CloudWatch's JSON log format expects), each with its own UTC timestamp (so a local
//! stack's logs can be lined up across functions), level from `RUST_LOG` (default
//! `info`).

use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. Call once, first thing in `main`.
pub fn init() {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_current_span(false)
        .with_ansi(false)
        .with_target(false)
        .init();
}
