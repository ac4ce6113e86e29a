//! The leaderboard service's domain library. Every Lambda function is a thin wrapper
//! around one use case here: its `main.rs` wires ([`wiring`]), its handler decodes the
//! event at the edge ([`edge`]), calls one use case ([`service`]) and encodes the reply.
//!
//! The folders are the layers, each importing only the ones below it:
//!
//! | layer | where | what |
//! |---|---|---|
//! | rules | the crate `leaderboard-rules` (`shared/rules/`) | ids, scores, orders, windows, boards, families, tournaments, leagues: plain functions over plain values, no I/O; the compiler keeps the floor (the crate depends on no port, adapter or async crate) |
//! | ports | [`store`] | the traits the use cases need, one per file, and their errors |
//! | use cases | [`service`] | boards, ingest and fan-out, reads, projector, rebuild, repair, seal, live views, tournaments, moderation, profiles |
//! | adapters | [`adapters`] | the ports over DynamoDB, Redis, SQS, EventBridge, AppSync, the social graph, ElastiCache |
//! | edge | [`edge`] | API Gateway and stream events in, replies out, the one status mapping |
//! | wiring | [`wiring`] | configuration -> clients -> adapters, once per container; logs, TLS |
//! | twins | `memory` (feature `test-util`, never in a function's build) | in-memory twins of the ports, for tests without servers and the benchmark's baselines |
//!
//! Every module keeps its name at the crate's root (`leaderboard::board`,
//! `leaderboard::http`, `leaderboard::dynamodb`, ...), so a caller's path says what it
//! uses, not where the file sits. Each layer keeps its own errors: `DomainError` in the
//! rules, `store::StoreError` and the adapters', `ServiceError` in [`service`],
//! `InitError` in [`wiring`]. `docs/architecture.md` maps every file.

pub use leaderboard_rules::{
    board, caller, cursor, decimal, error, family, ids, integrity, league, live, mapping,
    match_result, order, profile, rolling, schedule, score, tiebreak, time, tournament, window,
};

pub mod adapters;
pub mod edge;
#[cfg(any(test, feature = "test-util"))]
pub mod memory;
pub mod service;
pub mod store;
pub mod wiring;

pub use adapters::{appsync, dynamodb, elasticache, eventbridge, redis, social, sqs};
pub use edge::{http, invoke, lambda_records, lambda_stream};
pub use service::{metrics, ttl_cache};
pub use wiring::{config, telemetry, tls};
