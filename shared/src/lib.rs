//! The leaderboard service's domain library. Every Lambda function is a thin wrapper
//! around one use case here: its `main.rs` wires ([`wiring`]), its handler decodes the
//! event at the edge ([`http`], [`lambda_stream`]), calls one use case ([`service`]) and
//! encodes the reply.
//!
//! Rules (plain functions over plain values, unit-tested without I/O):
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
//!   the settle rule (issue 37, in progress);
//! - [`cursor`]: signed paging cursors; [`time`]: instants and their text;
//! - [`error`]: the rules' error, `DomainError`.
//!
//! The rules import only each other, never a port, an adapter or a use case; each layer
//! above keeps its own errors (`store::StoreError` and the adapters', `ServiceError` in
//! [`service`], `InitError` in [`wiring`]).
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
//! - `memory` (feature `test-util`, never in a function's build): in-memory twins of the
//!   store and the index, for tests without servers and the benchmark's baselines.
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
//! - [`ttl_cache`]: per-container caches; [`config`], [`telemetry`], [`metrics`].

pub mod appsync;
pub mod board;
pub mod caller;
pub mod config;
pub mod cursor;
pub mod decimal;
pub mod dynamodb;
pub mod elasticache;
pub mod error;
pub mod eventbridge;
pub mod family;
pub mod http;
pub mod ids;
pub mod invoke;
pub mod lambda_records;
pub mod lambda_stream;
pub mod league;
pub mod live;
pub mod mapping;
pub mod match_result;
#[cfg(any(test, feature = "test-util"))]
pub mod memory;
pub mod metrics;
pub mod order;
pub mod profile;
pub mod redis;
pub mod rolling;
pub mod schedule;
pub mod score;
pub mod service;
pub mod social;
pub mod sqs;
pub mod store;
pub mod telemetry;
pub mod tiebreak;
pub mod time;
pub mod tls;
pub mod tournament;
pub mod ttl_cache;
pub mod window;
pub mod wiring;

/// The floor of rules holds: each rule module imports only other rules (not `store`,
/// `service` or an adapter), and no two of them import each other, directly or round
/// about. Read from the sources, comments left out.
#[cfg(test)]
mod layers {
    use std::collections::{BTreeMap, BTreeSet};

    const RULES: [&str; 20] = [
        "ids",
        "decimal",
        "tiebreak",
        "profile",
        "league",
        "tournament",
        "score",
        "order",
        "window",
        "schedule",
        "rolling",
        "board",
        "family",
        "mapping",
        "match_result",
        "live",
        "cursor",
        "time",
        "caller",
        "error",
    ];

    /// The crate modules `source` names (`crate::x`), outside comments.
    fn imports(source: &str) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for line in source.lines() {
            let code = line.split("//").next().unwrap_or_default();
            for (at, _) in code.match_indices("crate::") {
                let name: String = code[at + "crate::".len()..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        }
        out
    }

    #[test]
    fn rules_import_only_rules_and_never_each_other_in_a_circle() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let graph: BTreeMap<&str, BTreeSet<String>> = RULES
            .iter()
            .map(|m| {
                let source = std::fs::read_to_string(dir.join(format!("{m}.rs"))).unwrap();
                (*m, imports(&source))
            })
            .collect();
        for (m, uses) in &graph {
            let upward: Vec<_> = uses
                .iter()
                .filter(|u| !RULES.contains(&u.as_str()))
                .collect();
            assert!(upward.is_empty(), "{m} imports {upward:?}, above the rules");
        }
        // Depth-first: a module met again while still on the path closes a circle.
        fn visit<'a>(
            m: &'a str,
            graph: &'a BTreeMap<&'a str, BTreeSet<String>>,
            path: &mut Vec<&'a str>,
            done: &mut BTreeSet<&'a str>,
        ) {
            if done.contains(m) {
                return;
            }
            assert!(!path.contains(&m), "a circle: {path:?} -> {m}");
            path.push(m);
            for next in &graph[m] {
                if next != m {
                    visit(next.as_str(), graph, path, done);
                }
            }
            path.pop();
            done.insert(m);
        }
        let mut done = BTreeSet::new();
        for m in RULES {
            visit(m, &graph, &mut Vec::new(), &mut done);
        }
        assert_eq!(done.len(), RULES.len());
    }
}
