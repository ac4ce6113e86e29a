//! The local stack under a sustained load: score posts and reads at fixed rates for a
//! while, open loop (each request starts on its own tick whatever the others are doing,
//! as a fleet of game servers and clients would send them), through the API Gateway
//! shim and every function behind it.
//!
//! A request that gets no reply within 10 s (the functions' own timeout) is a timeout;
//! any reply but a 2xx is an error. Reads alternate between a player's rank with its
//! neighbours and the top 100, with no player identity (the reply cache applies, as for
//! spectators); the stack runs with its read rate limits off, so no read is turned
//! away cheaply.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::json;

use crate::stats::Summary;

/// How long a request may take before it counts as a timeout.
const TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Serialize)]
pub struct LoadRun {
    pub seconds: f64,
    pub target_writes_per_s: u32,
    pub target_reads_per_s: u32,
    /// Replies per second that were not errors or timeouts.
    pub writes_per_s: f64,
    pub reads_per_s: f64,
    pub timeouts: u64,
    /// Replies other than 2xx, and refused connections.
    pub errors: u64,
    /// The errors by status (`0`: no reply, e.g. a refused connection).
    pub errors_by_status: std::collections::BTreeMap<u16, u64>,
    pub write_p50_ms: f64,
    pub write_p99_ms: f64,
    pub read_p50_ms: f64,
    pub read_p99_ms: f64,
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    timeouts: AtomicU64,
    /// Errors (replies other than 2xx, `0`: no reply) by status.
    by_status: Mutex<std::collections::BTreeMap<u16, u64>>,
    took: Mutex<Vec<Duration>>,
}

impl Tally {
    fn record(&self, started: Instant, outcome: Result<u16, reqwest::Error>) {
        match outcome {
            Ok(s) if (200..300).contains(&s) => {
                self.ok.fetch_add(1, Ordering::Relaxed);
                let took = started.elapsed();
                self.took.lock().expect("not poisoned").push(took);
            }
            Err(e) if e.is_timeout() => {
                self.timeouts.fetch_add(1, Ordering::Relaxed);
            }
            other => {
                let status = other.unwrap_or_default();
                *self
                    .by_status
                    .lock()
                    .expect("not poisoned")
                    .entry(status)
                    .or_default() += 1;
            }
        }
    }

    fn summary(&self) -> Summary {
        Summary::of(std::mem::take(
            &mut *self.took.lock().expect("not poisoned"),
        ))
    }
}

/// Sends `rate` requests per second for `seconds`, each from `make(i)`, and tallies them.
async fn open_loop<F>(rate: u32, seconds: u64, tally: Arc<Tally>, make: F)
where
    F: Fn(u64) -> reqwest::RequestBuilder,
{
    if rate == 0 {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let total = u64::from(rate) * seconds;
    let mut inflight = tokio::task::JoinSet::new();
    for i in 0..total {
        tick.tick().await;
        let req = make(i).timeout(TIMEOUT);
        let tally = tally.clone();
        inflight.spawn(async move {
            let started = Instant::now();
            let outcome = req.send().await.map(|r| r.status().as_u16());
            tally.record(started, outcome);
        });
        while inflight.try_join_next().is_some() {}
    }
    while inflight.join_next().await.is_some() {}
}

/// `Authorization` for the reads: a viewer's token from the stacks' identity provider
/// (`BENCH_PLAYER_TOKEN`, minted by infra/bench.sh with infra/local/idp.py).
pub fn viewer_token() -> String {
    format!(
        "Bearer {}",
        std::env::var("BENCH_PLAYER_TOKEN").unwrap_or_default()
    )
}

pub async fn run(
    base: &str,
    key: &str,
    writes_per_s: u32,
    reads_per_s: u32,
    seconds: u64,
) -> anyhow::Result<LoadRun> {
    let http = leaderboard::adapters::tls::http()
        .pool_max_idle_per_host(256)
        .build()?;
    let board = format!("load-{}", chrono::Utc::now().timestamp_millis());
    let status = http
        .post(format!("{base}/leaderboards"))
        .header("x-api-key", key)
        .json(&json!({"leaderboard_id": board}))
        .send()
        .await?
        .status();
    anyhow::ensure!(status.as_u16() == 201, "create board: {status}");
    // A board of players before the run, so reads find neighbours.
    const PLAYERS: u64 = 2_000;
    for chunk in (0..PLAYERS).collect::<Vec<_>>().chunks(50) {
        let posts = chunk.iter().map(|i| {
            http.post(format!("{base}/leaderboards/{board}/players/p{i:05}/score"))
                .header("x-api-key", key)
                .json(&json!({"new_score": i * 7 % 1_000, "match_id": "seed"}))
                .send()
        });
        for r in futures::future::join_all(posts).await {
            anyhow::ensure!(r?.status().as_u16() == 200, "seeding the load board");
        }
    }
    println!(
        "{:>28}: {writes_per_s} writes/s + {reads_per_s} reads/s for {seconds} s",
        "local stack load"
    );
    let (writes, reads) = (Arc::new(Tally::default()), Arc::new(Tally::default()));
    let started = Instant::now();
    let w = open_loop(writes_per_s, seconds, writes.clone(), |i| {
        let player = i % PLAYERS;
        http.post(format!(
            "{base}/leaderboards/{board}/players/p{player:05}/score"
        ))
        .header("x-api-key", key)
        .json(&json!({"new_score": 1_000 + i, "match_id": format!("m{i}")}))
    });
    let r = open_loop(reads_per_s, seconds, reads.clone(), |i| {
        if i % 2 == 0 {
            let player = (i * 7_919) % PLAYERS;
            http.get(format!(
                "{base}/leaderboards/{board}/players/p{player:05}/rank?k=5"
            ))
            .header("authorization", viewer_token())
        } else {
            http.get(format!("{base}/leaderboards/{board}/top?n=100"))
                .header("authorization", viewer_token())
        }
    });
    tokio::join!(w, r);
    let took = started.elapsed().as_secs_f64();
    let (ws, rs) = (writes.summary(), reads.summary());
    let mut errors_by_status = writes.by_status.lock().expect("not poisoned").clone();
    for (status, n) in reads.by_status.lock().expect("not poisoned").iter() {
        *errors_by_status.entry(*status).or_default() += n;
    }
    let run = LoadRun {
        seconds: took,
        target_writes_per_s: writes_per_s,
        target_reads_per_s: reads_per_s,
        writes_per_s: (writes.ok.load(Ordering::Relaxed) as f64 / took * 10.0).round() / 10.0,
        reads_per_s: (reads.ok.load(Ordering::Relaxed) as f64 / took * 10.0).round() / 10.0,
        timeouts: writes.timeouts.load(Ordering::Relaxed) + reads.timeouts.load(Ordering::Relaxed),
        errors: errors_by_status.values().sum(),
        errors_by_status,
        write_p50_ms: ws.p50_us / 1e3,
        write_p99_ms: ws.p99_us / 1e3,
        read_p50_ms: rs.p50_us / 1e3,
        read_p99_ms: rs.p99_us / 1e3,
    };
    println!(
        "{:>28}: {:.1} writes/s (p50 {:.0} ms, p99 {:.0} ms) + {:.1} reads/s (p50 {:.0} ms, p99 {:.0} ms) over {:.0} s; {} timeouts, {} errors {:?}",
        "local stack load",
        run.writes_per_s,
        run.write_p50_ms,
        run.write_p99_ms,
        run.reads_per_s,
        run.read_p50_ms,
        run.read_p99_ms,
        run.seconds,
        run.timeouts,
        run.errors,
        run.errors_by_status
    );
    Ok(run)
}
