//! The leaderboard service's rules: plain functions over plain values, unit-tested
//! without I/O. This crate depends on no AWS, Redis or async crate, so the compiler
//! keeps the floor: a rule cannot reach a port, an adapter or a use case
//! (`cargo tree -p leaderboard-rules` lists what it does depend on). The `leaderboard`
//! crate re-exports every module, so callers name them `leaderboard::board` etc.
//!
//! - [`ids`]: validated board, player and match ids;
//! - [`caller`]: who is asking (player, IP), decoded at the edge;
//! - [`score`]: scores within ±(2^53-1); [`decimal`]: exact decimal scores (scaled
//!   integers); [`tiebreak`]: tie-break columns and their order-preserving encoding;
//! - [`board`]: board definitions, policies (BEST, MIN, LATEST, SUM) and the fold;
//! - [`order`]: the rank order and its exact Redis sorted-set encoding;
//! - [`window`]: UTC time windows; [`schedule`]: a family's own periods (cron in a time
//!   zone, rolling windows); [`rolling`]: a rolling window's buckets and standings;
//! - [`family`]: board families and the ids of their boards;
//! - [`match_result`]: a match result as the API and the streams give it, validated;
//! - [`mapping`]: event sources' schema mappings to the canonical match result;
//! - [`profile`]: player profiles (the card every row shows) and results' metadata;
//! - [`live`]: live views (top n, a neighbourhood), their channels, versions and notices;
//! - [`tournament`]: tournament definitions and how joins' seats become cohorts;
//! - [`league`]: a tournament's tiers, promotion and demotion zones, rewards by rank, and
//!   the settle rule;
//! - [`export`]: a board's standings as a CSV file, row by row;
//! - [`reset`]: a board reset now, its fence and its archive's id;
//! - [`reward`]: reward tables (ranges of places or top percentiles) and what a sealed
//!   window's places earn;
//! - [`cursor`]: signed paging cursors; [`time`]: instants and their text;
//! - [`error`]: the rules' error, `DomainError` (each layer above keeps its own).

pub mod board;
pub mod caller;
pub mod cursor;
pub mod decimal;
pub mod error;
pub mod export;
pub mod family;
pub mod ids;
pub mod integrity;
pub mod league;
pub mod live;
pub mod mapping;
pub mod match_result;
pub mod order;
pub mod page;
pub mod policy;
pub mod profile;
pub mod reset;
pub mod reward;
pub mod rolling;
pub mod schedule;
pub mod score;
pub mod tiebreak;
pub mod time;
pub mod tournament;
pub mod window;
