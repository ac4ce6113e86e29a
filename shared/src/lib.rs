//! The leaderboard service's domain library. Every Lambda function is a thin wrapper
//! around one use case here.
//!
//! Rules (plain functions over plain values, unit-tested without I/O):
//! - [`ids`]: validated board, player and match ids;
//! - [`caller`]: who is asking (player, IP), decoded at the edge;
//! - [`score`]: scores within ±(2^53-1);
//! - [`board`]: board definitions, policies (BEST, MIN, LATEST, SUM) and the fold;
//! - [`order`]: the rank order and its exact Redis sorted-set encoding;
//! - [`window`]: UTC time windows and board families.
//!
//! Ports and adapters:
//! - [`store`]: the traits the use cases need;
//! - [`dynamodb`]: `DynamoScoreStore`, the source of truth;
//! - [`redis`]: `RedisRankIndex`, the rebuildable rank index (and the rate-limit
//!   counters);
//! - [`social`]: `HttpFriendsSource`, the social graph.
//!
//! Use cases and surfaces:
//! - [`service`]: boards and families, ingest and fan-out, reads (with the hot-spot
//!   protection: reply cache, top windows, rate limits), projector, rebuild;
//! - [`http`]: API Gateway request helpers and the error-to-status mapping (imports
//!   nothing from `service`, and `service` nothing from it);
//! - [`lambda_stream`]: DynamoDB stream events in, batch responses out;
//! - [`invoke`]: the error surface (`Diagnostic`) of the event-driven functions;
//! - [`cursor`]: signed paging cursors;
//! - [`wiring`]: configuration -> clients -> adapters, once per container;
//! - [`config`], [`telemetry`], [`metrics`], [`time`], [`error`].

pub mod board;
pub mod caller;
pub mod config;
pub mod cursor;
pub mod dynamodb;
pub mod error;
pub mod http;
pub mod ids;
pub mod invoke;
pub mod lambda_stream;
pub mod memory;
pub mod metrics;
pub mod order;
pub mod redis;
pub mod score;
pub mod service;
pub mod social;
pub mod sqs;
pub mod store;
pub mod telemetry;
pub mod time;
pub mod ttl_cache;
pub mod window;
pub mod wiring;
