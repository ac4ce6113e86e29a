//! The results file (`latest.json`: numbers only, stable keys) and its markdown table.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use redis::aio::ConnectionManager;
use serde::Serialize;

use crate::board::LoadRate;
use crate::cost::CostResults;
use crate::cpu::CpuResults;
use crate::freshness::Freshness;
use crate::load::LoadRun;
use crate::postgres::PostgresResults;
use crate::redis_ops::{RedisResults, Sharded};
use crate::stats::Summary;

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_gib: f64,
    pub os: String,
    pub redis_version: String,
    pub rustc: String,
}

fn first_line_after(text: &str, prefix: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|v| v.trim().trim_matches('"').to_owned())
}

/// The server's name and version: Valkey answers INFO with `valkey_version` (and a
/// Redis-compatible `redis_version` beside it).
pub async fn server_version(conn: &mut ConnectionManager) -> String {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(conn)
        .await
        .unwrap_or_default();
    match first_line_after(&info, "valkey_version:") {
        Some(v) => format!("valkey {v}"),
        None => format!(
            "redis {}",
            first_line_after(&info, "redis_version:").unwrap_or_default()
        ),
    }
}

pub async fn machine(redis: &mut ConnectionManager) -> Machine {
    let read = |path| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let mem_kib: f64 = first_line_after(&read("/proc/meminfo"), "MemTotal:")
        .and_then(|v| v.trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(redis)
        .await
        .unwrap_or_default();
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    Machine {
        cpu_model: cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            .unwrap_or_default(),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        os: first_line_after(&read("/etc/os-release"), "PRETTY_NAME=").unwrap_or_default(),
        redis_version: first_line_after(&info, "redis_version:").unwrap_or_default(),
        rustc,
    }
}

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
    /// Rebuild load rate / bare bulk-ZADD load rate (target >= 0.8).
    pub rebuild_vs_floor: f64,
    /// Projector records/s (batches of 1,000) / bare pipelined ZADD of the same moves.
    pub projector_vs_zadd: f64,
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
    pub bare_pipelined_zadd_per_s_batch_1000: f64,
    /// Records per second through `project` with `projector_shards` stream shards
    /// delivering batches of 1,000 at once (one in flight per shard, as in AWS).
    pub projector_sharded_records_per_s: f64,
    pub projector_shards: usize,
    /// Players per second loaded by the rebuild's index calls (DynamoDB reads excluded).
    pub rebuild_players_per_s: f64,
    pub bare_zadd_load_players_per_s: f64,
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
    /// The stack's stream poll interval during the freshness runs (AWS: 0.25 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub poll_interval_s: Option<f64>,
    pub targets: Vec<Target>,
}

fn records_per_s(batch: usize, s: &Summary) -> f64 {
    batch as f64 * 1e6 / s.mean_us
}

fn ratio(a: f64, b: f64) -> f64 {
    (a / b * 100.0).round() / 100.0
}

/// One server's measurements: the two loads and every Redis path.
pub struct Column {
    pub rebuild: LoadRate,
    pub bare_load: LoadRate,
    pub latency: RedisResults,
    pub sharded: Sharded,
    pub without_dense: WithoutDense,
}

/// The writing paths again on a board created without dense ranks.
pub struct WithoutDense {
    pub rebuild: LoadRate,
    pub sharded: Sharded,
    pub projector_batch_1000: Summary,
    pub projector_redis_us_per_batch_1000: f64,
}

/// A board without dense ranks: the projector and the rebuild load, with their ratios
/// to the same bare twins as the main board's.
#[derive(Debug, Clone, Serialize)]
pub struct WithoutDenseResults {
    pub projector_records_per_s: f64,
    pub projector_vs_zadd: f64,
    /// As `throughput.projector_sharded_records_per_s`, on this board.
    pub projector_sharded_records_per_s: f64,
    pub projector_sharded: Sharded,
    pub rebuild_players_per_s: f64,
    pub rebuild_vs_floor: f64,
    pub projector_batch_1000_us: Summary,
    /// Redis server time (its own command stats) per 1,000-record batch.
    pub projector_redis_us_per_batch_1000: f64,
    pub rebuild_load: LoadRate,
}

impl Column {
    fn ratios(&self, postgres: Option<&PostgresResults>) -> Ratios {
        let r = &self.latency;
        let t = self.throughput(None);
        Ratios {
            rank_p99_vs_bare: ratio(r.rank_neighbours.ours.p99_us, r.rank_neighbours.bare.p99_us),
            top_p99_vs_bare: ratio(r.top_100.ours.p99_us, r.top_100.bare.p99_us),
            friends_p99_vs_bare: ratio(r.friends_500.ours.p99_us, r.friends_500.bare.p99_us),
            apply_p99_vs_bare: ratio(r.ingest_apply.ours.p99_us, r.ingest_apply.bare.p99_us),
            rank_p99_names_vs_without: ratio(r.rank_with_names.p99_us, r.rank_without_names.p99_us),
            top_p99_names_vs_without: ratio(r.top_with_names.p99_us, r.top_without_names.p99_us),
            rebuild_vs_floor: ratio(t.rebuild_players_per_s, t.bare_zadd_load_players_per_s),
            projector_vs_zadd: ratio(
                t.projector_records_per_s,
                t.bare_pipelined_zadd_per_s_batch_1000,
            ),
            postgres_rank_over_ours: postgres
                .map(|p| ratio(p.rank_neighbours.p50_us, r.rank_neighbours.ours.p50_us)),
            postgres_top_over_ours: postgres
                .map(|p| ratio(p.top_100.p50_us, r.top_100.ours.p50_us)),
        }
    }

    fn without_dense(&self) -> WithoutDenseResults {
        let w = &self.without_dense;
        let t = self.throughput(None);
        let projector = records_per_s(1_000, &w.projector_batch_1000).round();
        WithoutDenseResults {
            projector_records_per_s: projector,
            projector_vs_zadd: ratio(projector, t.bare_pipelined_zadd_per_s_batch_1000),
            projector_sharded_records_per_s: w.sharded.records_per_s,
            projector_sharded: w.sharded.clone(),
            rebuild_players_per_s: w.rebuild.players_per_s.round(),
            rebuild_vs_floor: ratio(w.rebuild.players_per_s, t.bare_zadd_load_players_per_s),
            projector_batch_1000_us: w.projector_batch_1000,
            projector_redis_us_per_batch_1000: w.projector_redis_us_per_batch_1000,
            rebuild_load: w.rebuild,
        }
    }

    fn throughput(&self, postgres: Option<&PostgresResults>) -> Throughput {
        let r = &self.latency;
        Throughput {
            projector_records_per_s: records_per_s(1_000, &r.projector_batch_1000.ours).round(),
            projector_records_per_s_batch_100: records_per_s(100, &r.projector_batch_100.ours)
                .round(),
            bare_pipelined_zadd_per_s_batch_1000: records_per_s(
                1_000,
                &r.projector_batch_1000.bare,
            )
            .round(),
            projector_sharded_records_per_s: self.sharded.records_per_s,
            projector_shards: self.sharded.shards,
            rebuild_players_per_s: self.rebuild.players_per_s.round(),
            bare_zadd_load_players_per_s: self.bare_load.players_per_s.round(),
            postgres_copy_rows_per_s: postgres.map(|p| p.load.players_per_s.round()),
        }
    }
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
                name: "projector throughput",
                target: ">= 100,000 records/s",
                measured: format!("{:.0} records/s", throughput.projector_records_per_s),
                met: throughput.projector_records_per_s >= 100_000.0,
            },
            Target {
                name: "projector throughput, stream shards at once",
                target: ">= 100,000 records/s",
                measured: format!(
                    "{:.0} records/s ({} shards)",
                    throughput.projector_sharded_records_per_s, throughput.projector_shards
                ),
                met: throughput.projector_sharded_records_per_s >= 100_000.0,
            },
            Target {
                name: "rebuild load vs bare bulk ZADD",
                target: ">= 0.8x",
                measured: format!(
                    "{:.2}x ({:.0} players/s)",
                    ratios.rebuild_vs_floor, throughput.rebuild_players_per_s
                ),
                met: ratios.rebuild_vs_floor >= 0.8,
            },
            Target {
                name: "projector throughput, board without dense ranks",
                target: ">= 100,000 records/s",
                measured: format!(
                    "{:.0} records/s",
                    without_dense_ranks.projector_records_per_s
                ),
                met: without_dense_ranks.projector_records_per_s >= 100_000.0,
            },
            Target {
                name: "projector throughput, stream shards at once, board without dense ranks",
                target: ">= 100,000 records/s",
                measured: format!(
                    "{:.0} records/s ({} shards)",
                    without_dense_ranks.projector_sharded_records_per_s,
                    without_dense_ranks.projector_sharded.shards
                ),
                met: without_dense_ranks.projector_sharded_records_per_s >= 100_000.0,
            },
            Target {
                name: "rebuild load vs bare bulk ZADD, board without dense ranks",
                target: ">= 0.8x",
                measured: format!(
                    "{:.2}x ({:.0} players/s)",
                    without_dense_ranks.rebuild_vs_floor, without_dense_ranks.rebuild_players_per_s
                ),
                met: without_dense_ranks.rebuild_vs_floor >= 0.8,
            },
            Target {
                name: "ingest handler CPU, SDK included",
                target: "< 150 us per request",
                measured: format!("{:.1} us", cpu.ingest_us),
                met: cpu.ingest_us < 150.0,
            },
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
            poll_interval_s,
            targets,
        }
    }

    /// Adds the DynamoDB bill and its targets (issue 33: from 6 units to 3 for an
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

    pub fn markdown(&self) -> String {
        let m = &self.machine;
        let mut out = String::new();
        let _ = writeln!(out, "# Benchmark results\n");
        let _ = writeln!(
            out,
            "`{}` on {} ({} CPUs, {} GiB, {}), Redis {}, {}; {} players on the board; {}.\n",
            self.command,
            m.cpu_model,
            m.cpus,
            m.memory_gib,
            m.os,
            m.redis_version,
            m.rustc,
            self.players,
            self.generated_at
        );
        let _ = writeln!(out, "## Latency (microseconds, one client, sequential)\n");
        let _ = writeln!(
            out,
            "| operation | ours p50 | ours p95 | ours p99 | bare p50 | bare p99 | ours/bare p99 | PostgreSQL p50 | PostgreSQL p99 |"
        );
        let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        let l = &self.latency_us;
        let pg = self.postgres.as_ref();
        let rows = [
            (
                "rank + 10 neighbours",
                &l.rank_neighbours,
                pg.map(|p| &p.rank_neighbours),
            ),
            ("top-100", &l.top_100, pg.map(|p| &p.top_100)),
            ("friends-rank, 500 friends", &l.friends_500, None),
            ("ingest apply (write-through)", &l.ingest_apply, None),
            ("projector batch of 100", &l.projector_batch_100, None),
            ("projector batch of 1,000", &l.projector_batch_1000, None),
        ];
        for (name, pair, pg) in rows {
            let (pg50, pg99) = pg.map_or(("".into(), "".into()), |s| {
                (format!("{:.0}", s.p50_us), format!("{:.0}", s.p99_us))
            });
            let _ = writeln!(
                out,
                "| {name} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2} | {pg50} | {pg99} |",
                pair.ours.p50_us,
                pair.ours.p95_us,
                pair.ours.p99_us,
                pair.bare.p50_us,
                pair.bare.p99_us,
                pair.ours.p99_us / pair.bare.p99_us
            );
        }
        let rl = &l.rate_limit_check;
        let _ = writeln!(
            out,
            "| rate-limit check (no bare twin) | {:.1} | {:.1} | {:.1} | | | | | |\n",
            rl.p50_us, rl.p95_us, rl.p99_us
        );
        let t = &self.throughput;
        let _ = writeln!(out, "## Throughput\n");
        let _ = writeln!(out, "| what | per second |\n|---|---:|");
        let _ = writeln!(
            out,
            "| projector, batches of 1,000 | {:.0} records |",
            t.projector_records_per_s
        );
        let _ = writeln!(
            out,
            "| projector, batches of 100 | {:.0} records |",
            t.projector_records_per_s_batch_100
        );
        let _ = writeln!(
            out,
            "| a batch of 1,000: mean {:.0} us, of which decoding the event {:.0} us and Redis server time {:.0} us | |",
            self.latency_us.projector_batch_1000.ours.mean_us,
            self.latency_us.projector_decode_1000.mean_us,
            self.latency_us.projector_redis_us_per_batch_1000
        );
        let _ = writeln!(out, "{}", self.projector_sharded.row("projector"));
        let _ = writeln!(
            out,
            "| bare pipelined ZADD, batches of 1,000 | {:.0} commands |",
            t.bare_pipelined_zadd_per_s_batch_1000
        );
        let _ = writeln!(
            out,
            "| rebuild load (ours, version-checked, pages of 1,000) | {:.0} players |",
            t.rebuild_players_per_s
        );
        if let (Some(ours), Some(bare)) = (
            self.rebuild_load.redis_seconds,
            self.bare_load.redis_seconds,
        ) {
            let _ = writeln!(
                out,
                "| Redis server time of the loads: ours {ours:.2} s of {:.2} s, bare {bare:.2} s of {:.2} s | |",
                self.rebuild_load.seconds, self.bare_load.seconds
            );
        }
        let _ = writeln!(
            out,
            "| bare ZADD of 1,000 members per call | {:.0} players |",
            t.bare_zadd_load_players_per_s
        );
        if let Some(p) = t.postgres_copy_rows_per_s {
            let _ = writeln!(out, "| PostgreSQL COPY + index build | {p:.0} rows |");
        }
        let w = &self.without_dense_ranks;
        let _ = writeln!(
            out,
            "| board without dense ranks: projector, batches of 1,000 | {:.0} records ({:.2}x pipelined ZADD) |",
            w.projector_records_per_s, w.projector_vs_zadd
        );
        let _ = writeln!(
            out,
            "| a batch of 1,000 there: mean {:.0} us, Redis server time {:.0} us | |",
            w.projector_batch_1000_us.mean_us, w.projector_redis_us_per_batch_1000
        );
        let _ = writeln!(
            out,
            "{}",
            w.projector_sharded
                .row("board without dense ranks: projector")
        );
        let _ = writeln!(
            out,
            "| board without dense ranks: rebuild load | {:.0} players ({:.2}x bulk ZADD; {:.2} s in Redis) |",
            w.rebuild_players_per_s,
            w.rebuild_vs_floor,
            w.rebuild_load.redis_seconds.unwrap_or_default()
        );
        let _ = write!(
            out,
            "{}",
            by_command(&self.projector_sharded, &w.projector_sharded)
        );
        let c = &self.cpu_us_per_request;
        let _ = writeln!(
            out,
            "\n## Handler CPU per request (I/O waits excluded)\n\n| handler | CPU |\n|---|---:|\n| ingest (the row's read and conditional write + write-through) | {:.1} us |\n| rank + 10 neighbours | {:.1} us |",
            c.ingest_us, c.rank_us
        );
        let _ = writeln!(
            out,
            "| ingest, our own code (the same requests over the in-memory twins) | {:.1} us |",
            c.ingest_own_us
        );
        let calls = &c.ingest_calls;
        for (call, us) in [
            (
                "DynamoDB GetItem (the row, strongly consistent)",
                calls.dynamodb_get_row_us,
            ),
            (
                "DynamoDB PutItem (the row, conditional on its revision)",
                calls.dynamodb_commit_us,
            ),
            (
                "Redis: the rank before the write",
                calls.redis_previous_rank_us,
            ),
            ("Redis: the write-through apply", calls.redis_apply_us),
        ] {
            let _ = writeln!(out, "| ingest's call alone: {call} | {us:.1} us |");
        }
        if let Some(v) = &self.valkey {
            let _ = writeln!(
                out,
                "\n## Redis and Valkey, same run\n\n| figure | Redis {} | {} |\n|---|---:|---:|",
                self.machine.redis_version, v.version
            );
            let (a, b) = (&self.ratios, &v.ratios);
            let (ta, tb) = (&self.throughput, &v.throughput);
            let two = |x: f64, y: f64| (format!("{x:.2}"), format!("{y:.2}"));
            let whole = |x: f64, y: f64| (format!("{x:.0}"), format!("{y:.0}"));
            let rows = [
                (
                    "rank + 10 neighbours p99 / bare",
                    two(a.rank_p99_vs_bare, b.rank_p99_vs_bare),
                ),
                (
                    "top-100 p99 / bare",
                    two(a.top_p99_vs_bare, b.top_p99_vs_bare),
                ),
                (
                    "friends-rank p99 / bare",
                    two(a.friends_p99_vs_bare, b.friends_p99_vs_bare),
                ),
                (
                    "ingest apply p99 / bare",
                    two(a.apply_p99_vs_bare, b.apply_p99_vs_bare),
                ),
                (
                    "projector records/s (batches of 1,000)",
                    whole(ta.projector_records_per_s, tb.projector_records_per_s),
                ),
                (
                    "projector / pipelined ZADD",
                    two(a.projector_vs_zadd, b.projector_vs_zadd),
                ),
                (
                    "projector records/s, stream shards at once",
                    whole(
                        ta.projector_sharded_records_per_s,
                        tb.projector_sharded_records_per_s,
                    ),
                ),
                (
                    "rebuild players/s",
                    whole(ta.rebuild_players_per_s, tb.rebuild_players_per_s),
                ),
                (
                    "rebuild / bulk ZADD",
                    two(a.rebuild_vs_floor, b.rebuild_vs_floor),
                ),
                (
                    "without dense ranks: projector records/s",
                    whole(
                        self.without_dense_ranks.projector_records_per_s,
                        v.without_dense_ranks.projector_records_per_s,
                    ),
                ),
                (
                    "without dense ranks: projector / pipelined ZADD",
                    two(
                        self.without_dense_ranks.projector_vs_zadd,
                        v.without_dense_ranks.projector_vs_zadd,
                    ),
                ),
                (
                    "without dense ranks: projector records/s, stream shards at once",
                    whole(
                        self.without_dense_ranks.projector_sharded_records_per_s,
                        v.without_dense_ranks.projector_sharded_records_per_s,
                    ),
                ),
                (
                    "without dense ranks: rebuild / bulk ZADD",
                    two(
                        self.without_dense_ranks.rebuild_vs_floor,
                        v.without_dense_ranks.rebuild_vs_floor,
                    ),
                ),
            ];
            for (name, (x, y)) in rows {
                let _ = writeln!(out, "| {name} | {x} | {y} |");
            }
        }
        if !self.sizes.binaries.is_empty() {
            let _ = writeln!(
                out,
                "\n## Release binaries (this run's build)\n\n| function | bytes |\n|---|---:|"
            );
            for (name, bytes) in &self.sizes.binaries {
                let _ = writeln!(out, "| {name} | {bytes} |");
            }
        }
        if let Some(l) = &self.local_stack {
            let _ = writeln!(
                out,
                "\n## The local stack under load\n\n| | wanted/s | replied/s | p50 ms | p99 ms |\n|---|---:|---:|---:|---:|\n| writes | {} | {:.1} | {:.0} | {:.0} |\n| reads | {} | {:.1} | {:.0} | {:.0} |\n\n{:.0} s; {} timeouts (no reply in 10 s), {} errors (5xx or refused).",
                l.target_writes_per_s,
                l.writes_per_s,
                l.write_p50_ms,
                l.write_p99_ms,
                l.target_reads_per_s,
                l.reads_per_s,
                l.read_p50_ms,
                l.read_p99_ms,
                l.seconds,
                l.timeouts,
                l.errors
            );
        }
        if !self.freshness_ms.is_empty() {
            let _ = writeln!(
                out,
                "\n## Freshness through the stream path (write-through off, poll every {} s)\n\n| read cache | writes | p50 ms | p95 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|",
                self.poll_interval_s.map_or("?".into(), |s| s.to_string())
            );
            for f in &self.freshness_ms {
                let _ = writeln!(
                    out,
                    "| {} | {} | {:.0} | {:.0} | {:.0} | {:.0} |",
                    f.label, f.writes, f.p50_ms, f.p95_ms, f.p99_ms, f.max_ms
                );
            }
        }
        if let Some(c) = &self.cost {
            let _ = writeln!(
                out,
                "\n## What DynamoDB would bill (infra/local/meter.py)\n\nUnits per operation, warm caches; the degraded rank read on a board of {} players.\n\n| operation | write units | of them cancelled | read units | calls |\n|---|---:|---:|---:|---:|",
                c.degraded_board_players
            );
            for (name, w) in &c.write_units {
                let _ = writeln!(
                    out,
                    "| {name} | {w:.1} | {:.1} | {:.1} | {} |",
                    c.cancelled_write_units
                        .get(name)
                        .copied()
                        .unwrap_or_default(),
                    c.read_units.get(name).copied().unwrap_or_default(),
                    c.calls.get(name).copied().unwrap_or_default()
                );
            }
        }
        let _ = writeln!(
            out,
            "\n## Targets\n\n| target | wanted | measured | met |\n|---|---|---|---|"
        );
        for t in &self.targets {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                t.name,
                t.target,
                t.measured,
                if t.met { "yes" } else { "**no**" }
            );
        }
        out
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

/// The markdown section that splits the projector's Redis time per record by command,
/// for the main board (`dense`) and the board without dense ranks (`plain`), both fed
/// by stream shards at once; commands in order of the main board's cost.
fn by_command(dense: &Sharded, plain: &Sharded) -> String {
    let (a, b) = (
        &dense.redis_us_per_record_by_command,
        &plain.redis_us_per_record_by_command,
    );
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort_by(|x, y| {
        let cost = |n: &String| a.get(n).or(b.get(n)).copied().unwrap_or_default();
        cost(y).total_cmp(&cost(x)).then(x.cmp(y))
    });
    names.dedup();
    let mut out = String::from(
        "\n## Where the projector's Redis time goes (per record applied, shards at once)\n\n\
         `script` is the scripts' own time (Lua, and passing arguments and replies); each \
         command is what Redis spent running it for the scripts.\n\n\
         | command | board (dense ranks kept) | board without dense ranks |\n|---|---:|---:|\n",
    );
    let cell = |m: &BTreeMap<String, f64>, n: &String| {
        m.get(n)
            .map_or_else(String::new, |us| format!("{us:.2} us"))
    };
    for n in names {
        let _ = writeln!(out, "| {n} | {} | {} |", cell(a, n), cell(b, n));
    }
    let _ = writeln!(
        out,
        "| **all** | **{:.2} us** | **{:.2} us** |",
        dense.redis_us_per_record, plain.redis_us_per_record
    );
    out
}
