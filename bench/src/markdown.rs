//! `latest.md`: the results as tables a reader compares with the targets.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::column::WithoutDenseResults;
use crate::projector::Sharded;
use crate::report::{Ratios, Results, Throughput};

impl Results {
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
            "| bare ZREM + ZADD + HSET per move (what an exact index needs), pipelined, batches of 1,000 | {:.0} moves |",
            t.bare_pipelined_per_s_batch_1000
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
            "| bare ZADD + HSET per player (what an exact index needs), pages of 1,000 | {:.0} players |",
            t.bare_load_players_per_s
        );
        if let Some(p) = t.postgres_copy_rows_per_s {
            let _ = writeln!(out, "| PostgreSQL COPY + index build | {p:.0} rows |");
        }
        let w = &self.without_dense_ranks;
        let _ = writeln!(
            out,
            "| board without dense ranks: projector, batches of 1,000 | {:.0} records ({:.2}x the bare moves) |",
            w.projector_records_per_s, w.projector_vs_bare
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
            // The same figure of each engine's column: its ratios, throughput and the
            // runs without dense ranks.
            type Column<'a> = (&'a Ratios, &'a Throughput, &'a WithoutDenseResults);
            let redis: Column = (&self.ratios, &self.throughput, &self.without_dense_ranks);
            let valkey: Column = (&v.ratios, &v.throughput, &v.without_dense_ranks);
            let two =
                |f: fn(Column) -> f64| (format!("{:.2}", f(redis)), format!("{:.2}", f(valkey)));
            let whole =
                |f: fn(Column) -> f64| (format!("{:.0}", f(redis)), format!("{:.0}", f(valkey)));
            let rows = [
                (
                    "rank + 10 neighbours p99 / bare",
                    two(|(r, _, _)| r.rank_p99_vs_bare),
                ),
                ("top-100 p99 / bare", two(|(r, _, _)| r.top_p99_vs_bare)),
                (
                    "friends-rank p99 / bare",
                    two(|(r, _, _)| r.friends_p99_vs_bare),
                ),
                (
                    "ingest apply p99 / bare",
                    two(|(r, _, _)| r.apply_p99_vs_bare),
                ),
                (
                    "projector records/s (batches of 1,000)",
                    whole(|(_, t, _)| t.projector_records_per_s),
                ),
                (
                    "projector / pipelined ZADD",
                    two(|(r, _, _)| r.projector_vs_bare),
                ),
                (
                    "projector records/s, stream shards at once",
                    whole(|(_, t, _)| t.projector_sharded_records_per_s),
                ),
                (
                    "rebuild players/s",
                    whole(|(_, t, _)| t.rebuild_players_per_s),
                ),
                ("rebuild / bulk ZADD", two(|(r, _, _)| r.rebuild_vs_floor)),
                (
                    "without dense ranks: projector records/s",
                    whole(|(_, _, d)| d.projector_records_per_s),
                ),
                (
                    "without dense ranks: projector / pipelined ZADD",
                    two(|(_, _, d)| d.projector_vs_bare),
                ),
                (
                    "without dense ranks: projector records/s, stream shards at once",
                    whole(|(_, _, d)| d.projector_sharded_records_per_s),
                ),
                (
                    "without dense ranks: rebuild / bulk ZADD",
                    two(|(_, _, d)| d.rebuild_vs_floor),
                ),
            ];
            for (name, (x, y)) in rows {
                let _ = writeln!(out, "| {name} | {x} | {y} |");
            }
        }
        if !self.sizes.binaries.is_empty() {
            let _ = writeln!(
                out,
                "\n## Release binaries (this run's build)\n\n| function | bytes | init p50 |\n|---|---:|---:|"
            );
            for (name, bytes) in &self.sizes.binaries {
                let init = (self.sizes.init_ms_p50.get(name))
                    .map_or_else(String::new, |ms| format!("{ms:.1} ms"));
                let _ = writeln!(out, "| {name} | {bytes} | {init} |");
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
        if let Some(j) = &self.joins {
            let _ = writeln!(
                out,
                "\n## Tournament joins into one tier (cohorts of 50)\n\n| run | joins | writers | joins/s | p50 ms | p99 ms | seat retries a join | gave up | cohorts | largest |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
            );
            for r in &j.runs {
                let l = &r.latency;
                row(
                    &mut out,
                    &[
                        r.label.clone(),
                        r.joins.to_string(),
                        r.writers.to_string(),
                        format!("{:.0}", r.joins_per_s),
                        format!("{:.1} | {:.1}", l.p50_us / 1e3, l.p99_us / 1e3),
                        format!("{:.3}", r.retries_per_join),
                        format!("{} | {} | {}", r.gave_up, r.cohorts, r.largest_cohort),
                    ],
                );
            }
            let _ = writeln!(
                out,
                "\nThe floor (a join's DynamoDB calls, bare, from as many tasks): {:.0}/s (joins/floor {:.2}); the seat hint alone: {:.0} calls/s; filling cohorts one at a time over spreading them: {:.2}.",
                j.floor.per_s, j.joins_vs_floor, j.hint.per_s, j.fill_vs_spread
            );
        }
        if let Some(c) = &self.columns {
            let _ = writeln!(
                out,
                "\n## The score columns (microseconds, one client, {} players a board)\n\nAn improving result through the whole ingest (DynamoDB and the index), rank + 10 neighbours and top-100 from the index, on boards that differ only in their scores; the ratio is to the integer board, p99.\n\n| board | write p50 | write p99 | rank p50 | rank p99 | top-100 p50 | top-100 p99 | write / rank / top-100 p99 vs integers |\n|---|---:|---:|---:|---:|---:|---:|---|",
                c.players
            );
            for r in &c.runs {
                let ratios = (c.p99_vs_integers.get(r.label))
                    .map_or("1 / 1 / 1".into(), |[w, k, t]| {
                        format!("{w:.2} / {k:.2} / {t:.2}")
                    });
                let mut cells = vec![r.label.to_owned()];
                for s in [&r.write, &r.rank, &r.top_100] {
                    cells.push(format!("{:.0} | {:.0}", s.p50_us, s.p99_us));
                }
                cells.push(ratios);
                row(&mut out, &cells);
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

/// One table row from its cells (a cell may hold several, joined by ` | `).
fn row(out: &mut String, cells: &[String]) {
    let _ = writeln!(out, "| {} |", cells.join(" | "));
}
