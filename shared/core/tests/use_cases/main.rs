//! The use cases over the in-memory twins of the ports (`leaderboard_core::memory`): the
//! rules of ingest, fan-out, projection, rebuild and the read fallbacks, in seconds and
//! without a server. The end-to-end suite (`tests/`) runs the same use cases over
//! DynamoDB and Redis.

// A scenario reads top to bottom, as a player or an operator lives it: the workspace's
// line limit (clippy.toml) is for the code under test.
#![allow(clippy::too_many_lines)]

mod export;
mod fanout;
mod fixtures;
mod ingest;
mod moderation;
mod projector;
mod reads;
mod rebuild;
mod reset;
mod review;
mod rewards;
mod seal;
mod stream_ingest;
