//! Handler CPU per request, I/O waits excluded: the use case runs on a single-threaded
//! runtime in a thread of its own, and the thread's CPU clock (user + system, which
//! includes our side of the socket calls but not the time spent waiting on Redis or
//! DynamoDB) is read before and after a run of sequential requests.

use leaderboard_core::service::Context;
use leaderboard_core::store::{
    Commit, CommitOutcome, Consistency, EntryKind, IndexEntry, KeptReceipt, RankIndex, Receipt,
    Row, RowAt, ScoreStore,
};
use leaderboard_rules::board::{Policy, Standing};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode};
use std::time::Duration;

use leaderboard::edge::reply;
use leaderboard_core::service::ingest;
use leaderboard_core::service::reads;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::score::Score;
use serde::Serialize;

use crate::board::context;

#[derive(Debug, Clone, Copy, Serialize)]
pub struct CpuResults {
    /// `POST .../score`: validation, the strongly consistent read, the row's write,
    /// the write-through apply and the reply (SigV4 signing and JSON included). The
    /// route also reads the player's rank before the write (one Redis call, in
    /// `ingest_calls.redis_previous_rank_us`); it is left out here, as the in-memory
    /// twin's rank read sorts its whole board and would swamp `ingest_own_us`.
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
    /// conditional write): `ingest_calls.dynamodb_get_row_us`, kept under its older name.
    pub dynamodb_get_item_us: f64,
    /// Where one ingest request's CPU goes, call by call (each measured alone).
    pub ingest_calls: IngestCalls,
}

/// CPU per call of each I/O step an ingest request makes, measured alone over the same
/// backends: the strongly consistent read, the row's write, the Redis read of the rank
/// before the write (which `ingest_us` leaves out) and the write-through. What is left
/// of `ingest_us` beside the other three is our own code and the reply. The least any
/// design could spend is our own code plus one DynamoDB call and one Redis call.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct IngestCalls {
    /// `GetItem` of the player's row (strongly consistent).
    pub dynamodb_get_row_us: f64,
    /// `PutItem` of the row (the new standing and its receipt), conditional on its
    /// revision.
    pub dynamodb_commit_us: f64,
    /// The player's rank before the write (`around` with no neighbours).
    pub redis_previous_rank_us: f64,
    /// The write-through: the version-checked apply that answers the new rank.
    pub redis_apply_us: f64,
}

impl IngestCalls {
    /// The four calls together.
    pub fn total_us(&self) -> f64 {
        self.dynamodb_get_row_us
            + self.dynamodb_commit_us
            + self.redis_previous_rank_us
            + self.redis_apply_us
    }
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
    per_call_us(ingests, |i| async move {
        let reply = ingest::submit_score(ctx, submit(20 + i)).await;
        Ok(reply::respond(200, reply))
    })
    .await
}

/// Thread CPU per call of `call(i)` over `count` sequential calls, in microseconds.
async fn per_call_us<T, F, Fut>(count: usize, mut call: F) -> anyhow::Result<f64>
where
    F: FnMut(usize) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<T>>,
{
    let before = thread_cpu();
    for i in 0..count {
        std::hint::black_box(call(i).await?);
    }
    Ok((thread_cpu() - before).as_secs_f64() * 1e6 / count as f64)
}

/// Each of ingest's four I/O calls alone, `count` times: commits of new players'
/// first standings (receipt and standing, as ingest writes them), then their rows read
/// back, their ranks read and their standings applied again at a newer version.
async fn ingest_calls_us<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    count: usize,
) -> anyhow::Result<IngestCalls> {
    let player = |i: usize| PlayerId::parse(&format!("cpc{i:06}")).expect("valid");
    let now = leaderboard_rules::time::now_ms();
    let standing = |i: usize| Standing {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        metadata: None,
        score: Score::new("score", 4_000_000 + i as i64).expect("in range"),
        reached_at: now,
        version: 1,
        last_match_id: MatchId::parse(&format!("c{i}")).expect("valid"),
    };
    let dynamodb_commit_us = per_call_us(count, |i| async move {
        let (player, s) = (player(i), standing(i));
        let receipt = Receipt {
            set: false,
            submitted_ties: leaderboard_rules::tiebreak::Ties::none(),
            ties: leaderboard_rules::tiebreak::Ties::none(),
            metadata_digest: None,
            submitted: s.score,
            score: s.score,
            previous_score: None,
            update_applied: true,
            updated_at: s.reached_at,
            last_match_id: s.last_match_id.clone(),
            previous_rank: None,
            attempt: None,
            review: None,
        };
        let outcome = ctx
            .store
            .commit(&Commit {
                buckets: None,
                queue: None,
                audit: None,
                attempt: None,
                at: RowAt {
                    board: lb,
                    player: &player,
                    direction: Direction::Desc,
                    row: &Row::default(),
                    index_expire_at: None,
                },
                standing: Some(&s),
                receipt: KeptReceipt {
                    match_id: s.last_match_id.clone(),
                    receipt,
                    expires_at: now / 1000 + 86_400,
                },
                ranked: true,
                now_s: now / 1000,
            })
            .await?;
        anyhow::ensure!(outcome == CommitOutcome::Committed, "commit: {outcome:?}");
        Ok(())
    })
    .await?;
    let dynamodb_get_row_us = per_call_us(count, |i| async move {
        let row = ctx
            .store
            .get_row(lb, &player(i), Consistency::Strong)
            .await?;
        anyhow::ensure!(row.version == Some(1), "row of cpc{i}: {row:?}");
        Ok(row)
    })
    .await?;
    let entry = |i: usize, version: u64| {
        let s = standing(i);
        IndexEntry {
            metadata: None,
            board: lb.clone(),
            direction: Direction::Desc,
            key: RankKey {
                ties: leaderboard_rules::tiebreak::Ties::none(),
                score: s.score,
                reached_at: s.reached_at,
                player: player(i).to_string(),
            },
            version,
            expire_at: None,
            kind: EntryKind::Standing,
        }
    };
    // The first apply of each puts it on the board, so the rank reads find it.
    for i in 0..count {
        ctx.index.apply(&entry(i, 1)).await?;
    }
    let redis_previous_rank_us = per_call_us(count, |i| async move {
        let around = ctx
            .index
            .around(
                BoardOrder::new(lb, Direction::Desc),
                &player(i),
                0,
                RankMode::Unique,
            )
            .await?;
        anyhow::ensure!(around.is_some(), "cpc{i} is not on the board");
        Ok(around)
    })
    .await?;
    let redis_apply_us = per_call_us(count, |i| async move {
        let placed = ctx.index.apply(&entry(i, 2)).await?;
        anyhow::ensure!(placed.applied, "apply of cpc{i} at version 2 did not apply");
        Ok(placed)
    })
    .await?;
    Ok(IngestCalls {
        dynamodb_get_row_us,
        dynamodb_commit_us,
        redis_previous_rank_us,
        redis_apply_us,
    })
}

/// The same requests over the in-memory twins (same board id): our own code.
async fn own_code_us(
    lb: &LeaderboardId,
    ingests: usize,
    submit: &impl Fn(usize) -> SubmitScore,
) -> anyhow::Result<f64> {
    let ctx = leaderboard_core::memory::context();
    leaderboard_core::memory::seed(&ctx, lb.as_str(), Policy::Best, &[]).await;
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
                op: Default::default(),
                subscores: Vec::new(),
                metadata: None,
                board: lb.clone(),
                player: PlayerId::parse(&format!("cpu{i:06}")).expect("valid"),
                match_id: MatchId::parse(&format!("m{i}")).expect("valid"),
                score: leaderboard_rules::decimal::Amount::whole(
                    "score",
                    Score::new("score", 5_000_000 + i as i64).expect("in range"),
                ),
                event_ts: None,
                want_previous_rank: false,
                reached_at: None,
            };
            let ingest_us = ingest_cpu_us(&ctx, ingests, &submit).await?;
            let ingest_own_us = own_code_us(&lb, ingests, &submit).await?;
            let ingest_calls = ingest_calls_us(&ctx, &lb, ingests).await?;
            let get_item_us = ingest_calls.dynamodb_get_row_us;

            let viewer = Caller::default();
            let ids: Vec<PlayerId> = rank_players
                .iter()
                .map(|p| PlayerId::parse(p).expect("valid"))
                .collect();
            for p in ids.iter().take(50) {
                reads::rank(&ctx, &viewer, &lb, p, 5, RankMode::Unique).await?;
            }
            let rank_us = per_call_us(ids.len(), |i| {
                let (ctx, viewer, lb, p) = (&ctx, &viewer, &lb, &ids[i]);
                async move {
                    let reply = reads::rank(ctx, viewer, lb, p, 5, RankMode::Unique).await;
                    Ok(reply::respond(200, reply))
                }
            })
            .await?;
            println!(
                "{:>28}: ingest {ingest_us:.1} us (our code {ingest_own_us:.1} us), rank {rank_us:.1} us, one GetItem {get_item_us:.1} us of CPU",
                "handler CPU"
            );
            let c = &ingest_calls;
            println!(
                "{:>28}: GetItem {:.1} + PutItem {:.1} + Redis rank read {:.1} + Redis apply {:.1} = {:.1} us of CPU",
                "ingest's calls, each alone",
                c.dynamodb_get_row_us,
                c.dynamodb_commit_us,
                c.redis_previous_rank_us,
                c.redis_apply_us,
                c.total_us()
            );
            Ok(CpuResults {
                ingest_us,
                ingest_requests: ingests,
                ingest_own_us,
                rank_us,
                rank_requests: ids.len(),
                dynamodb_get_item_us: get_item_us,
                ingest_calls,
            })
        })
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the CPU measurement thread panicked"))?
}
