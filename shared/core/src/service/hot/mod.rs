//! Hot-spot protection for reads (docs/operations.md, "Hot boards"): what keeps a hot board or a celebrity
//! player cheap.
//!
//! - [`ReadCache`] (`read_cache`): a short-TTL per-container cache of whole replies with single-flight
//!   coalescing: identical reads arriving together share one load, and the answer is
//!   reused until the TTL (`READ_CACHE_TTL_MS`, default 250 ms) runs out, so N identical
//!   reads cost one index call per TTL. A player's reads of their own rank and friends
//!   bypass it, so their own write shows in their next read.
//! - [`TopWindows`] (`top_window`): each container's copy of a board's top [`TOP_WINDOW`] places with
//!   the version it was read at. Every apply that lands inside the window moves the
//!   version on (in the same script), so a top read asks only "still version v?" and
//!   gets the entries back only when they changed.
//! - [`RateLimits`] (`rate_limit`): per-player and per-IP fixed-window limits counted in Redis, shared
//!   by every container; over the limit is a 429 with `Retry-After`. Only reads are
//!   limited: results posted by game servers are never dropped by a limiter.

mod rate_limit;
mod read_cache;
mod top_window;

#[cfg(doc)]
use crate::store::TOP_WINDOW;
pub use rate_limit::RateLimits;
pub use read_cache::ReadCache;
pub use top_window::{TopWindows, WindowRead};
