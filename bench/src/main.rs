//! `bench`: measures the leaderboard's paths on a loaded board against the floor (bare
//! Redis commands from the same client) and against the seeds' SQL design (PostgreSQL),
//! and writes `latest.json` and `latest.md` to the results directory.
//!
//! Started by `infra/bench.sh`, which brings up its own redis-server, DynamoDB endpoint,
//! PostgreSQL and two local stacks (write-through off) and passes them in:
//! `BENCH_REDIS_URL`, `BENCH_DYNAMODB_URL`, `BENCH_POSTGRES_URL` (optional),
//! `BENCH_API_URLS` (optional, `label=url,...`), `BENCH_API_KEY`, `BENCH_POLL_INTERVAL_S`.
//!
//! Flags: `--players N` (default 1,000,000), `--quick` (fewer rounds), `--smoke` (a
//! few rounds of everything: the test command's check that the harness works),
//! `--out DIR`.

mod board;
mod cpu;
mod freshness;
mod postgres;
mod redis_ops;
mod report;
mod stats;

use std::path::PathBuf;

use anyhow::Context as _;
use leaderboard::ids::LeaderboardId;

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
}

fn args() -> anyhow::Result<Args> {
    let mut args = Args {
        players: 1_000_000,
        size: Size::Full,
        out: PathBuf::from("bench/results"),
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
            "--out" => args.out = it.next().context("--out needs a directory")?.into(),
            other => anyhow::bail!(
                "unknown argument {other:?} (--players N, --quick, --smoke, --out DIR)"
            ),
        }
    }
    Ok(args)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = args()?;
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

    let table = format!("bench-{}", chrono::Utc::now().timestamp_millis());
    let lb = LeaderboardId::parse("bench-board").expect("valid");
    let ctx = board::context(&redis_url, &dynamodb_url, &table).await?;
    board::create_board(&ctx, &lb).await?;
    println!("== generating {} players", args.players);
    let players = board::players(args.players);
    let mut bare = redis::Client::open(redis_url.as_str())?
        .get_connection_manager()
        .await?;

    println!("== loading Redis");
    let rebuild = board::load_by_rebuild(&redis_url, &ctx, &lb, &players).await?;
    let bare_load = board::load_bare(&mut bare, &players).await?;

    println!("== Redis paths: ours vs bare commands");
    let redis = redis_ops::run(&ctx, &mut bare, &lb, &players, rounds).await?;

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

    let machine = report::machine(&mut bare).await;
    let results = report::Results::new(
        machine,
        args.players,
        rebuild,
        bare_load,
        redis,
        postgres,
        cpu,
        fresh,
        env("BENCH_POLL_INTERVAL_S").and_then(|s| s.parse().ok()),
    );
    std::fs::create_dir_all(&args.out)?;
    let json = serde_json::to_string_pretty(&results)?;
    std::fs::write(args.out.join("latest.json"), json + "\n")?;
    let md = results.markdown();
    std::fs::write(args.out.join("latest.md"), &md)?;
    println!("\n{md}");
    println!("wrote {}/latest.json and latest.md", args.out.display());
    Ok(())
}
