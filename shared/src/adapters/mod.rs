//! Adapters: the ports of [`leaderboard_core::store`] over real backends, one module per backend
//! (each key and value format in its own codec module there).
//!
//! - [`dynamodb`], the source of truth: `DynamoScoreStore` (every key format in one file)
//!   and `DynamoStreams`;
//! - [`redis`]: `RedisRankIndex`, the rebuildable rank index (and the rate-limit counters,
//!   seats, live views), its Lua scripts in `redis/lua/`;
//! - [`sqs`]: the repair queue, stream ingest's dead letters, exports' turns; [`eventbridge`]: the events
//!   other services react to; [`appsync`]: the events API live views are pushed to
//!   (AppSync Events, SigV4); [`social`]: `HttpFriendsSource`, the social graph;
//!   [`elasticache`]: the rank cache's control plane (its shards and events); [`s3`]: the
//!   bucket exports are written to;
//! - [`tls`]: the trusted roots every TLS client of the adapters verifies servers with.

pub mod appsync;
pub mod dynamodb;
pub mod elasticache;
pub mod eventbridge;
pub mod redis;
pub mod s3;
pub mod social;
pub mod sqs;
pub mod tls;
