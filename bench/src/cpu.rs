//! Handler CPU per request, I/O waits excluded: the use case runs on a single-threaded
//! runtime in a thread of its own, and the thread's CPU clock (user + system, which
//! includes our side of the socket calls but not the time spent waiting on Redis or
//! DynamoDB) is read before and after a run of sequential requests.

use leaderboard::board::Policy;
use leaderboard::order::RankMode;
use leaderboard::service::Context;
use leaderboard::store::{RankIndex, ScoreStore, StandingStore};
use std::time::Duration;

use leaderboard::caller::Caller;
use leaderboard::http;
use leaderboard::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard::score::Score;
use leaderboard::service::ingest::{self, SubmitScore};
use leaderboard::service::reads;
use serde::Serialize;

use crate::board::context;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CpuResults {
    /// `POST .../score`: validation, the strongly consistent read, the transaction,
    /// the write-through apply and the reply (SigV4 signing and JSON included).
    pub ingest_us: f64,
    pub ingest_requests: usize,
    /// The same requests over the in-memory twins of DynamoDB and Redis: our own code
    /// (validation, the policy, the idempotency rules, the reply), the SDK and the
    /// sockets left out. An upper bound: the twins' own bookkeeping is counted in.
    pub ingest_own_us: f64,
    /// `GET .../rank?k=5` through the use case and the reply encoding.
    pub rank_us: f64,
    pub rank_requests: usize,
    /// One DynamoDB GetItem through the AWS SDK (ingest makes one read and one
    /// transaction), to show where the ingest CPU goes.
    pub dynamodb_get_item_us: f64,
}

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; the clock id is valid on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// CPU per ingest request through `ctx`: 20 warm-up requests (connections, the board
/// cache, the script cache), then `ingests` measured ones, each reply encoded.
async fn ingest_cpu_us<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    ingests: usize,
    submit: &impl Fn(usize) -> SubmitScore,
) -> anyhow::Result<f64> {
    for i in 0..20 {
        ingest::submit_score(ctx, submit(i)).await?;
    }
    let before = thread_cpu();
    for i in 20..20 + ingests {
        let reply = ingest::submit_score(ctx, submit(i)).await;
        std::hint::black_box(http::respond(200, reply));
    }
    Ok((thread_cpu() - before).as_secs_f64() * 1e6 / ingests as f64)
}

/// The same requests over the in-memory twins (same board id): our own code.
async fn own_code_us(
    lb: &LeaderboardId,
    ingests: usize,
    submit: &impl Fn(usize) -> SubmitScore,
) -> anyhow::Result<f64> {
    let ctx = leaderboard::memory::context();
    leaderboard::memory::seed(&ctx, lb.as_str(), Policy::Best, &[]).await;
    ingest_cpu_us(&ctx, ingests, submit).await
}

/// Runs in its own thread with a current-thread runtime, so every task it spawns (the
/// HTTP and Redis connections included) is charged to the clock it reads.
pub fn run(
    redis_url: String,
    dynamodb_url: String,
    table: String,
    lb: LeaderboardId,
    rank_players: Vec<String>,
    ingests: usize,
) -> anyhow::Result<CpuResults> {
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        rt.block_on(async move {
            let ctx = context(&redis_url, &dynamodb_url, &table).await?;
            let submit = |i: usize| SubmitScore {
                board: lb.clone(),
                player: PlayerId::parse(&format!("cpu{i:06}")).expect("valid"),
                match_id: MatchId::parse(&format!("m{i}")).expect("valid"),
                score: Score::new("score", 5_000_000 + i as i64).expect("in range"),
                event_ts: None,
                want_previous_rank: false,
                reached_at: None,
            };
            let ingest_us = ingest_cpu_us(&ctx, ingests, &submit).await?;
            let ingest_own_us = own_code_us(&lb, ingests, &submit).await?;

            let first = PlayerId::parse("cpu000000").expect("valid");
            let before = thread_cpu();
            for _ in 0..ingests {
                std::hint::black_box(ctx.store.get_standing(&lb, &first).await?);
            }
            let get_item_us = (thread_cpu() - before).as_secs_f64() * 1e6 / ingests as f64;

            let viewer = Caller::default();
            let ids: Vec<PlayerId> = rank_players
                .iter()
                .map(|p| PlayerId::parse(p).expect("valid"))
                .collect();
            for p in ids.iter().take(50) {
                reads::rank(&ctx, &viewer, &lb, p, 5, RankMode::Unique).await?;
            }
            let before = thread_cpu();
            for p in &ids {
                let reply = reads::rank(&ctx, &viewer, &lb, p, 5, RankMode::Unique).await;
                std::hint::black_box(http::respond(200, reply));
            }
            let rank_us = (thread_cpu() - before).as_secs_f64() * 1e6 / ids.len() as f64;
            println!(
                "{:>28}: ingest {ingest_us:.1} us (our code {ingest_own_us:.1} us), rank {rank_us:.1} us, one GetItem {get_item_us:.1} us of CPU",
                "handler CPU"
            );
            Ok(CpuResults {
                ingest_us,
                ingest_requests: ingests,
                ingest_own_us,
                rank_us,
                rank_requests: ids.len(),
                dynamodb_get_item_us: get_item_us,
            })
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the CPU measurement thread panicked"))?
}
