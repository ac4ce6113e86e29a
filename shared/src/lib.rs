//! The leaderboard service's outer layers. Every Lambda function is a thin wrapper around
//! one use case of `leaderboard-core`: its `main.rs` wires ([`wiring`]), its handler
//! decodes the event at the edge ([`edge`]), calls one use case and encodes the reply.
//!
//! The crates and folders are the layers, each importing only the ones below it:
//!
//! | layer | where | what |
//! |---|---|---|
//! | rules | the crate `leaderboard-rules` (`shared/rules/`) | ids, scores, orders, windows, boards, families, tournaments, leagues: plain functions over plain values, no I/O |
//! | ports | `leaderboard_core::store` (`shared/core/`) | the traits the use cases need, one per file, and their backend-neutral errors |
//! | use cases | `leaderboard_core::service` | boards, ingest and fan-out, reads, projector, rebuild, repair, seal, live views, tournaments, moderation, profiles |
//! | twins | `leaderboard_core::memory` (feature `test-util`) | in-memory twins of the ports, for tests without servers and the benchmark's baselines |
//! | adapters | [`adapters`] | the ports over DynamoDB, Redis, SQS, EventBridge, AppSync, the social graph, ElastiCache; the TLS provider they share |
//! | edge | [`edge`] | API Gateway and stream events in, replies out, the one status mapping |
//! | wiring | [`wiring`] | configuration -> clients -> adapters, once per container; logs, metrics |
//!
//! The compiler holds the floor: `leaderboard-core` depends on no AWS, Redis or Lambda
//! crate, and `leaderboard-rules` on no async one. Within this crate a path names its
//! layer (`crate::adapters::redis`, `crate::edge::http`, `crate::wiring::config`): there is
//! no re-export at the root, and `shared/tests/layers.rs` holds the direction by path.
//! Each layer keeps its own errors: `DomainError` in the rules, `StoreError` and its
//! siblings in the ports (an adapter converts its backend's error into them),
//! `ServiceError` in the use cases, `InitError` in [`wiring`]. `docs/architecture.md` maps
//! every file.

pub mod adapters;
pub mod edge;
pub mod wiring;
