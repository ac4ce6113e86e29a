//! Tournament joins (`--joins-only`): many players joining one occurrence with
//! cohorts of 50 at once, through the service's own join on the real adapters, with the
//! seat hints in Redis (cohorts filled one at a time, and spread over 4 at once) and, as
//! the baseline, with Redis away (seats from the table alone). Reports joins per second, latency, the conditional-write retries (seats found
//! held or busy), and checks what the joins left: every cohort at most 50, each player
//! once, no seat past the last. Also measures the seat hint alone (one Redis key), the
//! one thing every join of the tier shares.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, ensure};
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::{Context, ServiceError, Settings, tournaments};
use leaderboard_core::store::{SeatHints, TournamentStore};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::now_ms;
use leaderboard_rules::tournament::Tournament;
use serde::Serialize;

use crate::stats::{Summary, in_tasks};

/// One run of joins.
#[derive(Debug, Clone, Serialize)]
pub struct JoinRun {
    pub label: String,
    pub joins: u64,
    pub writers: usize,
    pub seconds: f64,
    pub joins_per_s: f64,
    pub latency: Summary,
    /// Seats tried and found held or busy, in all.
    pub retries: u64,
    pub retries_per_join: f64,
    /// Joins that gave up (503 `contention`: every seat tried was taken first).
    pub gave_up: u64,
    pub cohorts: u64,
    pub largest_cohort: u64,
}

/// Calls of one kind from many tasks at once: the floor (a join's DynamoDB calls alone,
/// bare from the SDK: two strongly consistent `GetItem`s, one `TransactWriteItems` of
/// two puts if absent; what the endpoint itself allows) and the seat hint alone
/// (`next_seat` on one occurrence).
#[derive(Debug, Clone, Serialize)]
pub struct CallRun {
    pub calls: u64,
    pub tasks: usize,
    pub per_s: f64,
    pub latency: Summary,
}

impl CallRun {
    /// `calls` from `tasks` tasks that took `took` in all, each call's time in `samples`.
    fn of(calls: u64, tasks: usize, took: Duration, samples: Vec<Duration>) -> Self {
        Self {
            calls,
            tasks,
            per_s: calls as f64 / took.as_secs_f64(),
            latency: Summary::of(samples),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Joins {
    pub runs: Vec<JoinRun>,
    /// The first run's joins per second over the floor's.
    pub joins_vs_floor: f64,
    /// Joins per second filling one cohort at a time over spreading them over 4 (each
    /// way's better of two runs).
    pub fill_vs_spread: f64,
    pub floor: CallRun,
    pub hint: CallRun,
}

/// A join's DynamoDB calls, bare (see [`CallRun`]), `calls` times from `tasks` tasks.
async fn floor(dynamodb_url: &str, calls: u64, tasks: usize) -> anyhow::Result<CallRun> {
    use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
    let table = format!("bench-floor-{}", now_ms());
    let store = crate::board::store(dynamodb_url, &table).await;
    store
        .create_table()
        .await
        .context("create the floor table")?;
    let client = Arc::new(store.client().clone());
    let table = Arc::new(table);
    let (done, took) = in_tasks(calls, tasks, move |i| {
        let (client, table) = (client.clone(), table.clone());
        async move {
            let s = |v: String| AttributeValue::S(v);
            for pk in [format!("FM#{i}"), format!("FB#{i}")] {
                (client.get_item().table_name(&*table))
                    .key("pk", s(pk))
                    .key("sk", s("x".into()))
                    .consistent_read(true)
                    .send()
                    .await?;
            }
            let put = |pk: String| -> anyhow::Result<TransactWriteItem> {
                let put = (Put::builder().table_name(&*table))
                    .item("pk", s(pk))
                    .item("sk", s("x".into()))
                    .condition_expression("attribute_not_exists(pk)")
                    .build()?;
                Ok(TransactWriteItem::builder().put(put).build())
            };
            (client.transact_write_items())
                .transact_items(put(format!("FS#{}#{i}", i % 16))?)
                .transact_items(put(format!("FJ#{i}"))?)
                .send()
                .await?;
            Ok(())
        }
    })
    .await?;
    let samples = done.into_iter().map(|(d, ())| d).collect();
    let run = CallRun::of(calls, tasks, took, samples);
    println!(
        "== the floor (a join's DynamoDB calls, bare): {:.0}/s",
        run.per_s
    );
    Ok(run)
}

/// A context over a new table: the seat hints at `redis_url` (budget `timeout`).
async fn context(
    redis_url: &str,
    dynamodb_url: &str,
    timeout: Duration,
) -> anyhow::Result<AppContext> {
    let table = format!("bench-joins-{}", now_ms());
    let store = crate::board::store(dynamodb_url, &table).await;
    store
        .create_table()
        .await
        .context("create the joins table")?;
    let prefix = format!("bench-joins-{}:", now_ms());
    let index = RedisRankIndex::new(redis_url, &prefix, timeout)?;
    Ok(Context::new(store, index, Settings::default()))
}

/// The weekly cup the joins join: cohorts of 50, seated as `seating` says (`FILL`, the
/// default, or `SPREAD`).
fn cup(seating: &str) -> Tournament {
    serde_json::from_value(serde_json::json!({
        "tournament_id": "bench-cup", "game": "bench", "mode": "race", "title": "Bench cup",
        "schedule": {"period": "WEEKLY"}, "cohort_size": 50, "cohort_seating": seating,
    }))
    .expect("a definition")
}

/// A join's seat, cohort and seat retries.
type Placed = (u64, Option<u64>, u32);

/// `joins` players joined by `writers` tasks, each task its own slice of players.
async fn run_joins(
    label: &str,
    (ctx, seating): (AppContext, &str),
    joins: u64,
    writers: usize,
) -> anyhow::Result<JoinRun> {
    let t = cup(seating);
    tournaments::create(&ctx, &Operator("bench".into()), t.clone()).await?;
    let ctx = Arc::new(ctx);
    let ctx_for_tasks = ctx.clone();
    println!("== {label}: {joins} joins from {writers} writers");
    let (done, took) = in_tasks(joins, writers, move |i| {
        let ctx = ctx_for_tasks.clone();
        async move {
            let p = PlayerId::parse(&format!("j{i:07}")).expect("a player id");
            match tournaments::join(&ctx, "bench-cup", &p).await {
                Ok((reply, joined)) => Ok(Some((reply.seat, reply.cohort, joined.retries))),
                // Every seat tried was taken first: counted, not fatal.
                Err(ServiceError::Contention) => Ok(None),
                Err(e) => Err(e.into()),
            }
        }
    })
    .await?;
    let gave_up = done.iter().filter(|(_, p)| p.is_none()).count() as u64;
    let (samples, placed): (Vec<Duration>, Vec<Placed>) = (done.into_iter())
        .filter_map(|(d, p)| p.map(|p| (d, p)))
        .unzip();
    let joined = placed.len() as u64;
    let seconds = took.as_secs_f64();
    let mut per_cohort = std::collections::BTreeMap::<u64, u64>::new();
    for (_, cohort, _) in &placed {
        *per_cohort.entry(cohort.context("a cohort")?).or_default() += 1;
    }
    let largest_cohort = per_cohort.values().copied().max().unwrap_or(0);
    ensure!(
        largest_cohort <= 50,
        "a cohort over its size: {largest_cohort}"
    );
    let mut seats: Vec<u64> = placed.iter().map(|p| p.0).collect();
    seats.sort_unstable();
    seats.dedup();
    ensure!(seats.len() as u64 == joined, "a seat twice");
    let occ: LeaderboardId = t.board_id(&t.schedule.occurrence_at(now_ms()).expect("weekly"));
    let highest = ctx
        .store
        .highest_seat(&occ, leaderboard_rules::tournament::tier_seats(0))
        .await?;
    ensure!(
        highest == joined.checked_sub(1),
        "seats past the last: {highest:?}"
    );
    let retries: u64 = placed.iter().map(|p| u64::from(p.2)).sum();
    let run = JoinRun {
        label: label.into(),
        joins,
        writers,
        seconds,
        joins_per_s: joined as f64 / seconds,
        latency: Summary::of(samples),
        retries,
        retries_per_join: retries as f64 / joined.max(1) as f64,
        gave_up,
        cohorts: per_cohort.len() as u64,
        largest_cohort,
    };
    println!(
        "   {:.0} joins/s, p50 {:.1} ms, p99 {:.1} ms, {} retries ({:.3} a join), {} gave up, {} cohorts",
        run.joins_per_s,
        run.latency.p50_us / 1e3,
        run.latency.p99_us / 1e3,
        run.retries,
        run.retries_per_join,
        run.gave_up,
        run.cohorts
    );
    Ok(run)
}

/// The seat hint alone: `calls` `next_seat` on one occurrence from `tasks` tasks.
async fn hint(redis_url: &str, calls: u64, tasks: usize) -> anyhow::Result<CallRun> {
    let prefix = format!("bench-hint-{}:", now_ms());
    let index = Arc::new(RedisRankIndex::new(
        redis_url,
        &prefix,
        Duration::from_secs(5),
    )?);
    let occ = LeaderboardId::parse("t:bench-hint:once")?;
    let (done, took) = in_tasks(calls, tasks, move |_| {
        let (index, occ) = (index.clone(), occ.clone());
        async move { Ok(index.next_seat(&occ, 0, i64::from(u32::MAX)).await?) }
    })
    .await?;
    let samples = done.into_iter().map(|(d, _)| d).collect();
    let run = CallRun::of(calls, tasks, took, samples);
    println!(
        "== the seat hint alone: {:.0} calls/s from {tasks} tasks",
        run.per_s
    );
    Ok(run)
}

/// Joins with the seat hints, then with Redis away, then the hint alone.
pub async fn run(
    redis_url: &str,
    dynamodb_url: &str,
    joins: u64,
    writers: usize,
) -> anyhow::Result<Joins> {
    // Cohorts filled one at a time (a new definition's seating) and the same joins dealt
    // over 4 cohorts at once, twice each in the order F S S F so that neither gains from
    // going first or last; each way's figure is its better run.
    let mut ways = Vec::new();
    for seating in ["FILL", "SPREAD", "SPREAD", "FILL"] {
        let ctx = context(redis_url, dynamodb_url, Duration::from_secs(5)).await?;
        let label = match seating {
            "FILL" => "seat hints in Redis",
            _ => "seat hints in Redis, cohorts spread (SPREAD)",
        };
        ways.push((
            seating,
            run_joins(label, (ctx, seating), joins, writers).await?,
        ));
    }
    let best = |way: &str| {
        (ways.iter())
            .filter(|(s, _)| *s == way)
            .map(|(_, r)| r.clone())
            .max_by(|a, b| a.joins_per_s.total_cmp(&b.joins_per_s))
            .expect("two runs each way")
    };
    let (hinted, spread) = (best("FILL"), best("SPREAD"));
    // Nothing listens on port 1: every hint fails at once, the breaker opens, and the
    // joins take one past the highest seat from the table.
    let away = context(
        "redis://127.0.0.1:1",
        dynamodb_url,
        Duration::from_millis(200),
    )
    .await?;
    let label = "Redis away: the table alone";
    let table_only = run_joins(label, (away, "FILL"), joins, writers).await?;
    let floor = floor(dynamodb_url, joins, writers).await?;
    let hint = hint(redis_url, joins * 10, writers).await?;
    Ok(Joins {
        joins_vs_floor: hinted.joins_per_s / floor.per_s,
        fill_vs_spread: hinted.joins_per_s / spread.joins_per_s,
        runs: vec![hinted, spread, table_only],
        floor,
        hint,
    })
}
