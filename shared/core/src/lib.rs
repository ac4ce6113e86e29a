//! The leaderboard service's use cases and the ports they call, in a crate of their own so
//! that the compiler, not habit, keeps them free of AWS, Redis and Lambda: this crate
//! depends on the rules (`leaderboard-rules`) and on no backend's crate. The adapters,
//! the edge and the wiring (the crate `leaderboard`, `shared/src/`) implement and call it.
//!
//! | layer | module | what |
//! |---|---|---|
//! | ports | [`store`] | the traits the use cases need, one per file, and their errors (backend-neutral: an adapter decides what is an outage when it converts) |
//! | use cases | [`service`] | boards, ingest and fan-out, reads, projector, rebuild, repair, seal, live views, tournaments, moderation, profiles |
//! | twins | `memory` (feature `test-util`, never in a function's build) | in-memory twins of the ports, for tests without servers and the benchmark's baselines |
//!
//! Its tests (`shared/core/tests/use_cases`) run every use case over the twins, with no
//! server. `docs/architecture.md` maps every file.

#[cfg(any(test, feature = "test-util"))]
pub mod memory;
pub mod service;
pub mod store;
