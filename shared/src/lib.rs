//! The leaderboard service's domain library. Every Lambda function is a thin wrapper
//! around one use case here: its `main.rs` wires ([`wiring`]), its handler decodes the
//! event at the edge ([`http`], [`lambda_stream`]), calls one use case ([`service`]) and
//! encodes the reply.
//!
//! Rules (plain functions over plain values, unit-tested without I/O):
//! - [`ids`]: validated board, player and match ids;
//! - [`caller`]: who is asking (player, IP), decoded at the edge;
//! - [`score`]: scores within ±(2^53-1);
//! - [`board`]: board definitions, policies (BEST, MIN, LATEST, SUM) and the fold;
//! - [`order`]: the rank order and its exact Redis sorted-set encoding;
//! - [`window`]: UTC time windows;
//! - [`family`]: board families and the ids of their boards;
//! - [`mapping`]: event sources' schema mappings to the canonical match result;
//! - [`live`]: live views (top n, a neighbourhood), their channels, versions and notices.
//!
//! Ports and adapters:
//! - [`store`]: the ports the use cases need, one per file (the score store in five
//!   parts, the rank index, rate counters, stream batches and the stream source, the
//!   repair queue, the friends source);
//! - [`dynamodb`]: `DynamoScoreStore` (the source of truth; every key format in one
//!   file) and `DynamoStreams`;
//! - [`redis`]: `RedisRankIndex`, the rebuildable rank index (and the rate-limit
//!   counters), its Lua scripts in `redis/lua/`;
//! - [`sqs`]: the repair queue, stream ingest's dead letters; [`eventbridge`]: the events other services react to;
//! - [`appsync`]: the events API live views are pushed to (AppSync Events, SigV4);
//! - [`social`]: `HttpFriendsSource`, the social graph;
//! - [`memory`]: in-memory twins of the store and the index, for tests without servers.
//!
//! Use cases:
//! - [`service`]: boards and families, ingest and fan-out, reads (with the hot-spot
//!   protection: reply cache, top windows, rate limits), projector, rebuild, repair,
//!   rank sketches, sealing closed windows (results, players' history), live views
//!   (snapshots and the publisher).
//!
//! Edges and plumbing:
//! - [`http`]: API Gateway requests and replies, and the one mapping from error codes to
//!   statuses (imports nothing from `service`, and `service` nothing from it);
//! - [`lambda_stream`]: DynamoDB stream events in, batch responses out;
//! - [`lambda_records`]: Kafka and Kinesis events in (stream ingest), batch responses out;
//! - [`invoke`]: the error surface (`Diagnostic`) of the event-driven functions;
//! - [`wiring`]: configuration -> clients -> adapters, once per container; [`tls`]: the
//!   one TLS crypto provider (ring) every client uses;
//! - [`cursor`]: signed paging cursors; [`ttl_cache`]: per-container caches;
//! - [`config`], [`telemetry`], [`metrics`], [`time`], [`error`].

pub mod appsync;
pub mod board;
pub mod caller;
pub mod config;
pub mod cursor;
pub mod dynamodb;
pub mod error;
pub mod eventbridge;
pub mod family;
pub mod http;
pub mod ids;
pub mod invoke;
pub mod lambda_records;
pub mod lambda_stream;
pub mod live;
pub mod mapping;
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
pub mod tls;
pub mod ttl_cache;
pub mod window;
pub mod wiring;
