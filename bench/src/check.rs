//! `bench --check` (`infra/bench.sh --check`, run by the test command): one request to
//! every server and stack the benchmark script started, so a change that breaks the
//! script (a port taken, a stack that does not start, a variable no longer passed) fails
//! the test command instead of a user's benchmark run. Nothing is measured or written.

use std::time::Duration;

use anyhow::Context as _;

use crate::env;

/// Each check's name and what it found; the first failure fails the run.
pub async fn run() -> anyhow::Result<()> {
    let http = leaderboard::adapters::tls::http()
        .timeout(Duration::from_secs(10))
        .build()?;
    for (name, var) in [("redis", "BENCH_REDIS_URL"), ("valkey", "BENCH_VALKEY_URL")] {
        let url = env(var).with_context(|| format!("{var} is not set"))?;
        let mut conn = crate::board::bare_connection(&url).await?;
        let pong: String = redis::cmd("PING").query_async(&mut conn).await?;
        anyhow::ensure!(pong == "PONG", "{name} answered PING with {pong}");
        println!("check: {name} at {url} answers PING");
    }
    let pg = env("BENCH_POSTGRES_URL").context("BENCH_POSTGRES_URL is not set")?;
    let (client, connection) = tokio_postgres::connect(&pg, tokio_postgres::NoTls).await?;
    tokio::spawn(connection);
    let one: i32 = client.query_one("SELECT 1", &[]).await?.get(0);
    anyhow::ensure!(one == 1, "PostgreSQL answered SELECT 1 with {one}");
    println!("check: PostgreSQL answers SELECT 1");
    // DynamoDB, through the meter in front of it (what the cost run reads).
    let meter = env("BENCH_METER_URL").context("BENCH_METER_URL is not set")?;
    let bill = http.get(format!("{meter}/__meter")).send().await?;
    anyhow::ensure!(
        bill.status().is_success(),
        "the meter answered {}",
        bill.status()
    );
    println!("check: the DynamoDB meter at {meter} answers");
    // Every stack: a player's read through its gateway and a function.
    let token = env("BENCH_PLAYER_TOKEN").context("BENCH_PLAYER_TOKEN is not set")?;
    let mut stacks: Vec<(String, String)> = (env("BENCH_API_URLS").unwrap_or_default())
        .split(',')
        .filter_map(|p| p.split_once('='))
        .map(|(label, url)| (label.to_owned(), url.to_owned()))
        .collect();
    stacks.push((
        "load".into(),
        env("BENCH_LOAD_URL").context("BENCH_LOAD_URL is not set")?,
    ));
    anyhow::ensure!(
        stacks.len() == 3,
        "three stacks, not {}: {stacks:?}",
        stacks.len()
    );
    for (label, url) in &stacks {
        let resp = (http.get(format!("{url}/leaderboards?limit=1")))
            .bearer_auth(&token)
            .send()
            .await
            .with_context(|| format!("the {label} stack at {url}"))?;
        let status = resp.status();
        anyhow::ensure!(
            status.is_success(),
            "the {label} stack at {url} answered {status}"
        );
        println!("check: the {label} stack at {url} serves a read");
    }
    for (name, path) in (env("BENCH_BINARIES").unwrap_or_default())
        .split(',')
        .filter_map(|p| p.split_once('='))
    {
        anyhow::ensure!(
            std::path::Path::new(path).is_file(),
            "no {name} binary at {path}"
        );
    }
    println!("check: every function's binary is there");
    Ok(())
}
