//! `bench`: measures the leaderboard's paths on a loaded board against the floor (bare
//! Redis commands from the same client) and against the seeds' SQL design (PostgreSQL),
//! and writes `latest.json` and `latest.md` to the results directory.
//!
//! Started by `infra/bench.sh`, which brings up its own redis-server, valkey-server,
//! DynamoDB endpoint, PostgreSQL and three local stacks and passes them in:
//! `BENCH_REDIS_URL`, `BENCH_DYNAMODB_URL`, and each optional: `BENCH_VALKEY_URL` (the
//! same Redis paths again on Valkey), `BENCH_POSTGRES_URL`, `BENCH_API_URLS`
//! (`label=url,...`: freshness through stacks with the write-through off),
//! `BENCH_API_KEY`, `BENCH_POLL_INTERVAL_S`, `BENCH_LOAD_URL` (a stack to hold
//! `BENCH_LOAD_WRITES_PER_S` (200) + `BENCH_LOAD_READS_PER_S` (1,000) for
//! `BENCH_LOAD_SECONDS`: 600, 60 with `--quick`), `BENCH_BINARIES` (`name=path,...`:
//! the release binaries whose sizes to report) and `BENCH_METER_URL` (infra/local/
//! meter.py in front of the DynamoDB endpoint: what DynamoDB would bill, `cost.*`).
//! Every run also joins players into one tournament tier (`joins`) and measures the
//! score columns (`columns`: integers, tie-break columns, decimal places).
//!
//! Flags: `--players N` (default 1,000,000), `--quick` (fewer rounds), `--smoke` (a
//! few rounds of everything: the test command's check that the harness works),
//! `--cost-only` (only the DynamoDB bill, to `cost.json`), `--joins-only` (only
//! tournament joins, to `joins.json`: see `joins`), `--matches-only` (only a whole match
//! against one request per player, to `matches.{json,md}`: see `matches`), `--check` (one request to every server
//! and stack, nothing measured: see `check`), `--out DIR`.

// A benchmark's scenarios and report tables read top to bottom: long by nature, and
// measured code is the library's, which the workspace's limits hold.
#![allow(clippy::too_many_lines)]

mod board;
mod check;
mod column;
mod columns;
mod cost;
mod cpu;
mod freshness;
mod joins;
mod load;
mod machine;
mod markdown;
mod matches;
mod names;
mod postgres;
mod projector;
mod redis_ops;
mod report;
mod stats;

use std::path::PathBuf;

use anyhow::Context as _;
use leaderboard_rules::ids::LeaderboardId;

use crate::redis_ops::Rounds;

/// How many rounds each measurement runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Size {
    Full,
    Quick,
    /// Just enough to prove every path runs (the test command uses it).
    Smoke,
}

struct Args {
    players: u64,
    size: Size,
    out: PathBuf,
    /// Only the DynamoDB bill (`BENCH_METER_URL`), written to `cost.json`.
    cost_only: bool,
    /// Only tournament joins, written to `joins.json`.
    joins_only: bool,
    /// Only a whole match against one request per player, to `matches.{json,md}`.
    matches_only: bool,
    /// One request to every server and stack, nothing measured (`check`).
    check: bool,
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        players: 1_000_000,
        size: Size::Full,
        out: PathBuf::from("bench/results"),
        cost_only: false,
        joins_only: false,
        matches_only: false,
        check: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--players" => {
                let raw = it.next().context("--players needs a number")?;
                args.players = raw.replace('_', "").parse().context("--players")?;
            }
            "--quick" => args.size = Size::Quick,
            "--smoke" => args.size = Size::Smoke,
            "--cost-only" => args.cost_only = true,
            "--joins-only" => args.joins_only = true,
            "--matches-only" => args.matches_only = true,
            "--check" => args.check = true,
            "--out" => args.out = it.next().context("--out needs a directory")?.into(),
            other => anyhow::bail!(
                "unknown argument {other:?} (--players N, --quick, --smoke, --cost-only, --joins-only, --matches-only, --check, --out DIR)"
            ),
        }
    }
    Ok(args)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Loads the board into one server (through the rebuild, then the bare floor) and
/// measures every Redis path on it: one column of the report.
async fn redis_column(
    ctx: &leaderboard::wiring::AppContext,
    url: &str,
    bare: &mut redis::aio::ConnectionManager,
    lb: &LeaderboardId,
    players: &[board::Player],
    rounds: Rounds,
) -> anyhow::Result<column::Column> {
    println!("== loading the index");
    let rebuild = board::load_by_rebuild(url, ctx, lb, players, true).await?;
    let bare_load = board::load_bare(bare, players).await?;
    println!("== index paths: ours vs bare commands");
    let latency = redis_ops::run(ctx, url, bare, lb, players, rounds).await?;
    let sharded =
        projector::projector_sharded(ctx, bare, "", lb, players, rounds.batches_1000).await?;
    let _: () = redis::cmd("UNLINK")
        .arg(board::BARE_LOAD_KEY)
        .arg(board::BARE_HASH_KEY)
        .query_async(bare)
        .await?;

    println!("== a board without dense ranks (the same players and moves)");
    let plain = LeaderboardId::parse("bench-plain").expect("valid");
    let plain_rebuild = board::load_by_rebuild(url, ctx, &plain, players, false).await?;
    let (projector, redis_us) =
        projector::projector_without_dense(ctx, bare, &plain, players, rounds.batches_1000).await?;
    let plain_sharded = projector::projector_sharded(
        ctx,
        bare,
        " without dense ranks",
        &plain,
        players,
        rounds.batches_1000,
    )
    .await?;
    let (z, h) = ctx.index.keys(&plain);
    let _: () = redis::cmd("UNLINK")
        .arg(z)
        .arg(h)
        .arg(ctx.index.marker_key(&plain))
        .query_async(bare)
        .await?;
    Ok(column::Column {
        rebuild,
        bare_load,
        latency,
        sharded,
        without_dense: column::WithoutDense {
            rebuild: plain_rebuild,
            sharded: plain_sharded,
            projector_batch_1000: projector,
            projector_redis_us_per_batch_1000: redis_us,
        },
    })
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
    if args.check {
        return check::run().await;
    }
    let redis_url =
        env("BENCH_REDIS_URL").context("BENCH_REDIS_URL is required (run infra/bench.sh)")?;
    let dynamodb_url = env("BENCH_DYNAMODB_URL").context("BENCH_DYNAMODB_URL is required")?;
    let pick = |full, quick, smoke| match args.size {
        Size::Full => full,
        Size::Quick => quick,
        Size::Smoke => smoke,
    };
    let rounds = Rounds {
        reads: pick(20_000, 2_000, 100),
        friends: pick(3_000, 500, 20),
        applies: pick(20_000, 2_000, 100),
        batches_100: pick(1_000, 200, 5),
        batches_1000: pick(200, 30, 2),
    };

    if args.cost_only {
        let url = env("BENCH_METER_URL").context("--cost-only needs BENCH_METER_URL")?;
        let cost = cost::run(
            &redis_url,
            &dynamodb_url,
            &url,
            pick(2_000, 1_000, 100) as u64,
        )
        .await?;
        std::fs::create_dir_all(&args.out)?;
        let path = args.out.join("cost.json");
        let command = env("BENCH_COMMAND").unwrap_or_else(|| "bench --cost-only".into());
        let file = serde_json::json!({
            "generated_at": chrono::Utc::now().to_rfc3339(),
            "command": command,
            "cost": cost,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&file)? + "\n")?;
        println!("wrote {}", path.display());
        return Ok(());
    }

    if args.matches_only {
        let api = (
            env("BENCH_LOAD_URL").context("--matches-only needs BENCH_LOAD_URL")?,
            env("BENCH_API_KEY").context("--matches-only needs BENCH_API_KEY")?,
            PathBuf::from(env("BENCH_LOAD_DIR").context("--matches-only needs BENCH_LOAD_DIR")?),
        );
        let meter = env("BENCH_METER_URL").context("--matches-only needs BENCH_METER_URL")?;
        let rounds = pick(20, 8, 2);
        let results = matches::run(&redis_url, &meter, api, rounds).await?;
        std::fs::create_dir_all(&args.out)?;
        let command = env("BENCH_COMMAND").unwrap_or_else(|| "bench --matches-only".into());
        let file = serde_json::json!({
            "generated_at": chrono::Utc::now().to_rfc3339(),
            "command": command,
            "matches": results,
        });
        std::fs::write(
            args.out.join("matches.json"),
            serde_json::to_string_pretty(&file)? + "\n",
        )?;
        std::fs::write(
            args.out.join("matches.md"),
            matches::markdown(&results, &command),
        )?;
        println!("wrote {}", args.out.join("matches.md").display());
        return Ok(());
    }

    // 10,000 joins from 64 writers (4,000 with --quick).
    let joins = || {
        joins::run(
            &redis_url,
            &dynamodb_url,
            pick(10_000, 4_000, 200) as u64,
            64,
        )
    };
    if args.joins_only {
        let joins = joins().await?;
        std::fs::create_dir_all(&args.out)?;
        let path = args.out.join("joins.json");
        let command = env("BENCH_COMMAND").unwrap_or_else(|| "bench --joins-only".into());
        let file = serde_json::json!({
            "generated_at": chrono::Utc::now().to_rfc3339(),
            "command": command,
            "joins": joins,
        });
        std::fs::write(&path, serde_json::to_string_pretty(&file)? + "\n")?;
        println!("wrote {}", path.display());
        return Ok(());
    }

    let table = format!("bench-{}", chrono::Utc::now().timestamp_millis());
    let lb = LeaderboardId::parse("bench-board").expect("valid");
    let ctx = board::context(&redis_url, &dynamodb_url, &table).await?;
    board::create_board(&ctx, &lb).await?;
    println!("== generating {} players", args.players);
    let players = board::players(args.players);
    let mut bare = board::bare_connection(&redis_url).await?;
    let column = redis_column(&ctx, &redis_url, &mut bare, &lb, &players, rounds).await?;

    let valkey = match env("BENCH_VALKEY_URL") {
        Some(url) => {
            println!("== the same on Valkey");
            let vctx = board::context(&url, &dynamodb_url, &table).await?;
            let mut vbare = board::bare_connection(&url).await?;
            let c = redis_column(&vctx, &url, &mut vbare, &lb, &players, rounds).await?;
            Some((machine::server_version(&mut vbare).await, c))
        }
        None => None,
    };

    let postgres = match env("BENCH_POSTGRES_URL") {
        Some(url) => {
            println!("== PostgreSQL");
            let (ranks, tops) = (pick(20, 5, 2), pick(2_000, 200, 10));
            Some(postgres::run(&url, &players, ranks, tops).await?)
        }
        None => {
            println!("== PostgreSQL skipped (BENCH_POSTGRES_URL not set)");
            None
        }
    };

    println!("== handler CPU");
    let sample: Vec<String> = players
        .iter()
        .step_by((players.len() / 2_000).max(1))
        .map(|p| p.id.clone())
        .collect();
    let cpu = cpu::run(
        redis_url.clone(),
        dynamodb_url.clone(),
        table.clone(),
        lb.clone(),
        sample,
        pick(500, 100, 10),
    )?;

    println!("== tournament joins into one tier");
    let joins = joins().await?;

    println!("== the score columns: integers, tie-break columns, decimal places");
    let columns = columns::run(
        &redis_url,
        &dynamodb_url,
        pick(5_000, 1_000, 100) as u64,
        pick(2_000, 500, 20) as u64,
        pick(2_000, 500, 20) as u64,
    )
    .await?;

    let mut fresh = Vec::new();
    if let Some(apis) = env("BENCH_API_URLS") {
        println!("== freshness through the stream path");
        let key = env("BENCH_API_KEY").unwrap_or_else(|| "local-dev-key".into());
        let writes = pick(300, 50, 10);
        for spec in apis.split(',') {
            let (label, url) = spec
                .split_once('=')
                .context("BENCH_API_URLS is label=url,...")?;
            fresh.push(freshness::run(label, url, &key, writes).await?);
        }
    }

    let local_stack = match env("BENCH_LOAD_URL") {
        Some(url) => {
            println!("== the local stack under load");
            let key = env("BENCH_API_KEY").unwrap_or_else(|| "local-dev-key".into());
            let num = |name: &str, default: u64| {
                env(name).and_then(|v| v.parse().ok()).unwrap_or(default)
            };
            let seconds = num("BENCH_LOAD_SECONDS", pick(600, 60, 3) as u64);
            let writes = num("BENCH_LOAD_WRITES_PER_S", 200) as u32;
            let reads = num("BENCH_LOAD_READS_PER_S", 1_000) as u32;
            Some(load::run(&url, &key, writes, reads, seconds).await?)
        }
        None => None,
    };

    let cost = match env("BENCH_METER_URL") {
        Some(url) => {
            println!("== what DynamoDB would bill (the meter at {url})");
            Some(
                cost::run(
                    &redis_url,
                    &dynamodb_url,
                    &url,
                    pick(2_000, 1_000, 100) as u64,
                )
                .await?,
            )
        }
        None => None,
    };

    let machine = machine::machine(&mut bare).await;
    let results = report::Results::new(
        machine,
        args.players,
        column,
        valkey,
        postgres,
        cpu,
        local_stack,
        fresh,
        env("BENCH_POLL_INTERVAL_S").and_then(|s| s.parse().ok()),
    )
    .with_cost(cost)
    .with_joins(joins)
    .with_columns(columns);
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::to_string_pretty(&results)?;
    std::fs::write(args.out.join("latest.json"), json + "\n")?;
    let md = results.markdown();
    std::fs::write(args.out.join("latest.md"), &md)?;
    println!("\n{md}");
    println!("wrote {}/latest.json and latest.md", args.out.display());
    Ok(())
}
