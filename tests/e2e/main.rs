//! End-to-end tests over real servers: redis-server, the DynamoDB + Streams endpoint
//! (moto), and for the HTTP tests the functions themselves behind the API Gateway shim.
//! `infra/test.sh` starts the shared servers; each test makes its own table and keys.

// A scenario reads top to bottom, as a player or an operator lives it: the workspace's
// line limit (clippy.toml) is for the code under test.
#![allow(clippy::too_many_lines)]

mod bans;
mod cache_events;
mod cache_iam;
mod clients;
mod cluster;
mod console;
mod contract;
mod corrections;
mod cors;
mod crash;
mod decimals;
mod demo_page;
mod exports;
mod faults;
mod gateway;
mod hot;
mod http_api;
mod http_boards;
mod idempotency;
mod index;
mod integrity;
mod leagues;
mod live;
mod matches;
mod metadata;
mod moderation;
mod operations;
mod pagination;
mod parameters;
mod profiles;
mod projector;
mod proxy;
mod reset;
mod resilience;
mod review;
mod rewards;
mod roles;
mod rolling;
mod rules;
mod schedules;
mod seal;
mod signing;
mod stream_ingest;
mod support;
mod tiebreaks;
mod tournaments;
mod walks;
mod windows;
