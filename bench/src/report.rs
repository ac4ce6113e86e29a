//! The results file (`latest.json`: numbers only, stable keys) and the targets each run
//! is held to; `markdown.rs` writes it as `latest.md`.

use serde::Serialize;

use crate::board::LoadRate;
use crate::column::{Column, WithoutDenseResults};
use crate::columns::Columns;
use crate::cost::CostResults;
use crate::cpu::CpuResults;
use crate::freshness::Freshness;
use crate::joins::Joins;
use crate::load::LoadRun;
use crate::machine::Machine;
use crate::postgres::PostgresResults;
use crate::projector::Sharded;
use crate::redis_ops::RedisResults;

#[derive(Debug, Clone, Serialize)]
pub struct Ratios {
    /// Ours / bare Redis, p99 (target <= 2).
    pub rank_p99_vs_bare: f64,
    pub top_p99_vs_bare: f64,
    pub friends_p99_vs_bare: f64,
    pub apply_p99_vs_bare: f64,
    /// With names on every row / the same read without, p99 (target <= 1.3).
    pub rank_p99_names_vs_without: f64,
    pub top_p99_names_vs_without: f64,
    /// Rebuild load rate / the bare commands an exact index needs per player loaded
    /// (ZADD + HSET, pages of 1,000).
    pub rebuild_vs_floor: f64,
    /// Projector records/s (batches of 1,000) / the bare commands an exact index needs
    /// per move (ZREM + ZADD + HSET, pipelined) of the same moves.
    pub projector_vs_bare: f64,
    /// PostgreSQL p50 / ours p50 (target >= 100 for rank).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_rank_over_ours: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_top_over_ours: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Throughput {
    /// Records per second through `project` in batches of 1,000 (mean batch time).
    pub projector_records_per_s: f64,
    pub projector_records_per_s_batch_100: f64,
    pub bare_pipelined_per_s_batch_1000: f64,
    /// Records per second through `project` with `projector_shards` stream shards
    /// delivering batches of 1,000 at once (one in flight per shard, as in AWS).
    pub projector_sharded_records_per_s: f64,
    pub projector_shards: usize,
    /// Players per second loaded by the rebuild's index calls (DynamoDB reads excluded).
    pub rebuild_players_per_s: f64,
    pub bare_load_players_per_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres_copy_rows_per_s: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Target {
    pub name: &'static str,
    pub target: &'static str,
    pub measured: String,
    pub met: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Results {
    pub generated_at: String,
    pub command: String,
    pub machine: Machine,
    pub players: u64,
    pub ratios: Ratios,
    pub throughput: Throughput,
    /// The projector fed by several stream shards at once (`throughput` has its rate).
    pub projector_sharded: Sharded,
    /// The projector and the rebuild on a board created without dense ranks.
    pub without_dense_ranks: WithoutDenseResults,
    pub latency_us: RedisResults,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postgres: Option<PostgresResults>,
    pub rebuild_load: LoadRate,
    pub bare_load: LoadRate,
    pub cpu_us_per_request: CpuResults,
    /// The ingest CPU targets' figures: with the SDK against the keep-alive endpoint
    /// (`ingest_us`, target < 150) and our own code (`ingest_own_us`, target < 50).
    pub cpu: CpuTargets,
    /// Release binaries of the functions (this run's build, host arch).
    pub sizes: Sizes,
    /// The same Redis paths on Valkey, when the run had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub valkey: Option<ValkeyColumn>,
    /// The local stack under a sustained mix of writes and reads, when the run had one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_stack: Option<LoadRun>,
    pub freshness_ms: Vec<Freshness>,
    /// What DynamoDB would bill per operation (infra/local/meter.py), when the run had
    /// the meter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostResults>,
    /// Tournament joins into one tier: with the seat hints, with Redis away, the floor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joins: Option<Joins>,
    /// The score columns' cost: the same results and reads on an integer board, one
    /// with two tie-break columns and one with three decimal places.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Columns>,
    /// The stack's stream poll interval during the freshness runs (AWS: 0.25 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_s: Option<f64>,
    pub targets: Vec<Target>,
}

/// The Valkey column: the same ratios and throughput as the top level's Redis ones.
#[derive(Debug, Clone, Serialize)]
pub struct ValkeyColumn {
    pub version: String,
    pub ratios: Ratios,
    pub throughput: Throughput,
    pub latency_us: RedisResults,
    pub projector_sharded: Sharded,
    pub rebuild_load: LoadRate,
    pub bare_load: LoadRate,
    pub without_dense_ranks: WithoutDenseResults,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CpuTargets {
    pub ingest_us: f64,
    pub ingest_own_us: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Sizes {
    /// Function name -> bytes of its release binary.
    pub binaries: std::collections::BTreeMap<String, u64>,
    pub max_binary_bytes: u64,
    /// Function name -> its cold start (process start to the first Runtime API poll),
    /// median ms of 20 (`infra/local/init_time.py`, `BENCH_INIT_JSON`).
    pub init_ms_p50: std::collections::BTreeMap<String, f64>,
    pub max_init_ms_p50: f64,
    /// The same measure of a process that only polls the Runtime API (bash): what starting
    /// a process costs on this host, included in every figure above.
    pub init_floor_ms_p50: f64,
}

impl Sizes {
    /// The release binaries `BENCH_BINARIES` lists (`name=path,...`), as `infra/bench.sh`
    /// passes them; empty when unset.
    pub fn from_env() -> Self {
        let mut s = Self::default();
        let list = std::env::var("BENCH_BINARIES").unwrap_or_default();
        for spec in list.split(',').filter(|s| !s.is_empty()) {
            if let Some((name, path)) = spec.split_once('=')
                && let Ok(meta) = std::fs::metadata(path)
            {
                s.binaries.insert(name.to_owned(), meta.len());
            }
        }
        s.max_binary_bytes = s.binaries.values().copied().max().unwrap_or(0);
        let init = std::env::var("BENCH_INIT_JSON").ok();
        let rows: Vec<serde_json::Value> = (init.and_then(|path| std::fs::read(path).ok()))
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default();
        for row in rows {
            if let (Some(name), Some(ms)) = (row["function"].as_str(), row["init_ms_p50"].as_f64())
            {
                s.init_ms_p50.insert(name.to_owned(), ms);
                s.init_floor_ms_p50 = row["floor_ms_p50"].as_f64().unwrap_or_default();
            }
        }
        s.max_init_ms_p50 = s.init_ms_p50.values().copied().fold(0.0, f64::max);
        s
    }
}

impl Results {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        machine: Machine,
        players: u64,
        column: Column,
        valkey: Option<(String, Column)>,
        postgres: Option<PostgresResults>,
        cpu: CpuResults,
        local_stack: Option<LoadRun>,
        freshness_ms: Vec<Freshness>,
        poll_interval_s: Option<f64>,
    ) -> Self {
        let ratios = column.ratios(postgres.as_ref());
        let throughput = column.throughput(postgres.as_ref());
        let valkey = valkey.map(|(version, c)| ValkeyColumn {
            version,
            ratios: c.ratios(None),
            throughput: c.throughput(None),
            without_dense_ranks: c.without_dense(),
            latency_us: c.latency,
            projector_sharded: c.sharded,
            rebuild_load: c.rebuild,
            bare_load: c.bare_load,
        });
        let without_dense_ranks = column.without_dense();
        let sizes = Sizes::from_env();
        let Column {
            rebuild: rebuild_load,
            bare_load,
            latency: redis,
            sharded: projector_sharded,
            ..
        } = column;
        let mut targets = vec![
            within_2x("rank + 10 neighbours p99 vs bare", ratios.rank_p99_vs_bare),
            within_2x("top-100 p99 vs bare", ratios.top_p99_vs_bare),
            within_2x("friends-rank (500) p99 vs bare", ratios.friends_p99_vs_bare),
            within_1_3x(
                "rank + 10 neighbours p99, names vs none",
                ratios.rank_p99_names_vs_without,
            ),
            within_1_3x(
                "top-100 p99, names vs none",
                ratios.top_p99_names_vs_without,
            ),
            Target {
                name: "ingest handler CPU, our own code",
                target: "< 50 us per request",
                measured: format!("{:.1} us", cpu.ingest_own_us),
                met: cpu.ingest_own_us < 50.0,
            },
        ];
        if sizes.max_binary_bytes > 0 {
            targets.push(Target {
                name: "largest function binary (this build)",
                target: "< 8 MB",
                measured: format!("{:.2} MB", sizes.max_binary_bytes as f64 / 1e6),
                met: sizes.max_binary_bytes < 8_000_000,
            });
        }
        if !sizes.init_ms_p50.is_empty() {
            targets.push(Target {
                name: "slowest function init, p50 of 20 cold starts (this build)",
                target: "< 30 ms",
                measured: format!(
                    "{:.1} ms (starting a process here: {:.1} ms of it)",
                    sizes.max_init_ms_p50, sizes.init_floor_ms_p50
                ),
                met: sizes.max_init_ms_p50 < 30.0,
            });
        }
        if let Some(l) = &local_stack {
            targets.push(Target {
                name: "local stack under load",
                target: "200 writes/s + 1,000 reads/s for 10 min, no timeouts",
                measured: format!(
                    "{:.0} writes/s + {:.0} reads/s for {:.0} s, {} timeouts, {} errors",
                    l.writes_per_s, l.reads_per_s, l.seconds, l.timeouts, l.errors
                ),
                met: l.writes_per_s >= 199.0
                    && l.reads_per_s >= 995.0
                    && l.seconds >= 600.0
                    && l.timeouts == 0
                    && l.errors == 0,
            });
        }
        if let Some(x) = ratios.postgres_rank_over_ours {
            targets.push(Target {
                name: "rank vs PostgreSQL ROW_NUMBER (p50)",
                target: ">= 100x faster",
                measured: format!("{x:.0}x"),
                met: x >= 100.0,
            });
        }
        for f in &freshness_ms {
            targets.push(Target {
                name: "freshness for others (stream path)",
                target: "p95 <= 500 ms, p99 <= 1 s",
                measured: format!(
                    "{}: p95 {:.0} ms, p99 {:.0} ms",
                    f.label, f.p95_ms, f.p99_ms
                ),
                met: f.p95_ms <= 500.0 && f.p99_ms <= 1_000.0,
            });
        }
        Self {
            generated_at: chrono::Utc::now().to_rfc3339(),
            command: std::env::var("BENCH_COMMAND").unwrap_or_else(|_| "infra/bench.sh".into()),
            machine,
            players,
            ratios,
            throughput,
            projector_sharded,
            without_dense_ranks,
            latency_us: redis,
            postgres,
            rebuild_load,
            bare_load,
            cpu: CpuTargets {
                ingest_us: cpu.ingest_us,
                ingest_own_us: cpu.ingest_own_us,
            },
            cpu_us_per_request: cpu,
            sizes,
            valkey,
            local_stack,
            freshness_ms,
            cost: None,
            joins: None,
            columns: None,
            poll_interval_s,
            targets,
        }
    }

    /// Adds the DynamoDB bill and its targets (from 6 units to 3 for an
    /// improving result, ~40 to 12 for a family's first match on 6 boards).
    pub fn with_cost(mut self, cost: Option<CostResults>) -> Self {
        if let Some(c) = &cost {
            for (row, most, target) in [
                ("improving", 3.0, "improving <= 3"),
                ("not_improving", 1.5, "not_improving <= 1.5"),
                ("retry", 0.0, "retry 0"),
                ("family_6_first", 12.0, "family_6_first <= 12"),
                ("family_10_first", 18.0, "family_10_first <= 18"),
            ] {
                let units = c.write_units.get(row).copied().unwrap_or(f64::NAN);
                self.targets.push(Target {
                    name: "DynamoDB write units per result",
                    target,
                    measured: format!("{units:.1}"),
                    met: units <= most,
                });
            }
            let reads = c
                .read_units
                .get("before_write_per_board")
                .copied()
                .unwrap_or(f64::NAN);
            self.targets.push(Target {
                name: "DynamoDB read units before a write",
                target: "<= 1 per board",
                measured: format!("{reads:.2}"),
                met: reads <= 1.0,
            });
        }
        self.cost = cost;
        self
    }
}

impl Results {
    /// Adds the joins and their target (the design: 2,000/s into one tier on the local
    /// stack, no cohort over size; the run itself fails on a cohort over size).
    pub fn with_joins(mut self, joins: Joins) -> Self {
        let hinted = &joins.runs[0];
        self.targets.push(Target {
            name: "tournament joins into one tier",
            target: ">= 2,000/s, no cohort over size",
            measured: format!(
                "{:.0}/s from {} writers ({:.2}x the floor: a join's bare DynamoDB calls, {:.0}/s on this endpoint), largest cohort {}, {} gave up",
                hinted.joins_per_s,
                hinted.writers,
                joins.joins_vs_floor,
                joins.floor.per_s,
                hinted.largest_cohort,
                hinted.gave_up
            ),
            met: hinted.joins_per_s >= 2_000.0 && hinted.largest_cohort <= 50,
        });
        self.joins = Some(joins);
        self
    }

    /// Adds the score columns' figures (no target: the design sets none; reported as
    /// ratios to the integer board).
    pub fn with_columns(mut self, columns: Columns) -> Self {
        self.columns = Some(columns);
        self
    }
}

fn within_2x(name: &'static str, ratio: f64) -> Target {
    within(name, ratio, 2.0, "<= 2x bare Redis")
}

fn within_1_3x(name: &'static str, ratio: f64) -> Target {
    within(name, ratio, 1.3, "<= 1.3x the same read without names")
}

/// A ratio's target: met at or below `limit`.
fn within(name: &'static str, ratio: f64, limit: f64, target: &'static str) -> Target {
    Target {
        name,
        target,
        measured: format!("{ratio:.2}x"),
        met: ratio <= limit,
    }
}
