//! The projector against the bare commands an exact index needs (ZREM + ZADD + HSET per
//! move): stream batches of moved standings applied by shards at once, with what Redis
//! spent on each command.

use std::collections::BTreeMap;

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use leaderboard::adapters::dynamodb::StandingItem;
use leaderboard::edge::lambda_stream;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::projector::project;
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId};
use leaderboard_rules::order::Direction;
use redis::aio::ConnectionManager;
use serde::Serialize;

use crate::board::{Player, Rng, player_id};
use crate::stats::{Summary, measure};

/// A player's standing after a match result that moved it: a higher score, reached later
/// (as in the stream after most results: a result that changes nothing the index keeps
/// is cheaper to apply).
pub(crate) fn moved(p: &Player, rng: &mut Rng, seq: usize) -> Player {
    Player {
        id: p.id.clone(),
        score: p.score + 1 + rng.below(1_000_000) as i64,
        reached_at: p.reached_at + 1 + seq as i64,
    }
}

/// A stream record as the DynamoDB stream delivers a changed standing.
fn record(lb: &LeaderboardId, p: &Player, version: u64, seq: usize) -> EventRecord {
    let standing = Standing {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        metadata: None,
        score: p.key().score,
        reached_at: p.reached_at,
        version,
        last_match_id: MatchId::parse("m-bench").expect("valid"),
    };
    let item = StandingItem::new(lb, &player_id(p), Direction::Desc, &standing, None);
    let mut r = EventRecord::default();
    r.event_name = "MODIFY".to_owned();
    r.event_id = format!("e{seq}");
    r.change.new_image = serde_dynamo::to_item(item).expect("a standing encodes");
    r.change.sequence_number = Some(format!("{seq:021}"));
    r
}

/// Stream batches of `size` records as the Lambda runtime receives them (JSON), each
/// record a newer version of a random player's standing.
pub(crate) fn batches(
    lb: &LeaderboardId,
    players: &[Player],
    size: usize,
    count: usize,
    rng: &mut Rng,
    version: &mut u64,
) -> Vec<Vec<u8>> {
    (0..count)
        .map(|b| {
            let mut event = Event::default();
            event.records = (0..size)
                .map(|i| {
                    *version += 1;
                    let seq = b * size + i;
                    let p = moved(&players[rng.below(players.len() as u64) as usize], rng, seq);
                    record(lb, &p, *version, seq)
                })
                .collect();
            serde_json::to_vec(&event).expect("an event encodes")
        })
        .collect()
}

pub async fn reset_server_stats(conn: &mut ConnectionManager) -> anyhow::Result<()> {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(conn)
        .await?;
    Ok(())
}

/// Microseconds the server spent in each command since its stats were reset, by
/// command name (lower case). Commands a script runs are counted under their own names
/// as well as inside the script's `evalsha`.
pub async fn server_usec_by_command(
    conn: &mut ConnectionManager,
) -> anyhow::Result<BTreeMap<String, f64>> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(conn)
        .await?;
    Ok(info
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_"))
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let usec = rest
                .split(',')
                .find_map(|kv| kv.strip_prefix("usec="))?
                .parse()
                .ok()?;
            Some((name.to_owned(), usec))
        })
        .collect())
}

/// Microseconds the server spent in `command` since its stats were reset.
pub async fn server_usec(conn: &mut ConnectionManager, command: &str) -> anyhow::Result<f64> {
    Ok(server_usec_by_command(conn)
        .await?
        .get(command)
        .copied()
        .unwrap_or(0.0))
}

/// The projector over `events` (each a stream batch of `size` records; the first 5
/// warm up): its timings and the Redis server time of its scripts per batch (warm-ups
/// included).
pub(crate) async fn projector_batches(
    ctx: &AppContext,
    stats: &mut ConnectionManager,
    label: &str,
    events: &[Vec<u8>],
    size: usize,
) -> anyhow::Result<(Summary, f64)> {
    reset_server_stats(stats).await?;
    let name = format!("projector {size}{label} (ours)");
    let ours = measure(&name, 5, events.len() - 5, |i| {
        let json = &events[i];
        async move {
            let event: Event = serde_json::from_slice(json)?;
            let (retry, stats) =
                project(&ctx.index, &ctx.repairs, lambda_stream::batch(event)).await;
            anyhow::ensure!(
                retry.is_empty() && stats.applied + stats.stale == size,
                "projector failed: {stats:?}"
            );
            Ok(stats.applied)
        }
    })
    .await?;
    let usec = server_usec(stats, "evalsha").await?;
    Ok((ours, usec / events.len() as f64))
}

/// How many stream shards feed the projector at once in [`projector_sharded`]: as many
/// as this machine has cores (Redis takes one, the decoding the other).
pub const SHARDS: usize = 2;

/// The projector fed by [`SHARDS`] stream shards at once, as in AWS: DynamoDB Streams
/// gives each shard its own projector invocation, one batch in flight per shard, and a
/// player's changes stay in one shard (here: each shard moves its own share of the
/// players). While one shard's batch is in Redis the next is decoded, so the figure is
/// the pipelined rate that the sequential batches above leave on the table.
#[derive(Debug, Clone, Serialize)]
pub struct Sharded {
    pub shards: usize,
    pub records: usize,
    pub seconds: f64,
    pub records_per_s: f64,
    /// Redis server time (its own command stats) per record applied.
    pub redis_us_per_record: f64,
    /// Where that time goes, per record: each command the scripts ran (`zadd`, `zrem`,
    /// `hget`, `hset`, `zrange` for the top-window edge, `zcount` for the distinct
    /// scores, ...), and `script` for the rest of the scripts' time (Lua itself, passing
    /// arguments and replies between Lua and Redis).
    pub redis_us_per_record_by_command: BTreeMap<String, f64>,
}

impl Sharded {
    /// The results table's row for this run of `what`.
    pub fn row(&self, what: &str) -> String {
        format!(
            "| {what}, {} stream shards at once (batches of 1,000) | {:.0} records ({:.1} us Redis server time each) |",
            self.shards, self.records_per_s, self.redis_us_per_record
        )
    }
}

/// Runs `count` batches of 1,000 on `lb`, split over [`SHARDS`] shards that run at once;
/// every record is a newer version (the other runs end far below 10M), so each applies.
pub async fn projector_sharded(
    ctx: &AppContext,
    stats: &mut ConnectionManager,
    label: &str,
    lb: &LeaderboardId,
    players: &[Player],
    count: usize,
) -> anyhow::Result<Sharded> {
    const SIZE: usize = 1_000;
    let per_shard = count.div_ceil(SHARDS);
    let mut rng = Rng::new(13);
    let mut version = 10_000_000u64;
    let share = players.len().div_ceil(SHARDS);
    let streams: Vec<Vec<Vec<u8>>> = players
        .chunks(share)
        .map(|own| batches(lb, own, SIZE, per_shard, &mut rng, &mut version))
        .collect();
    reset_server_stats(stats).await?;
    let start = std::time::Instant::now();
    let applied = futures::future::try_join_all(streams.iter().map(|events| async move {
        let mut applied = 0;
        for json in events {
            let event: Event = serde_json::from_slice(json)?;
            let (retry, stats) =
                project(&ctx.index, &ctx.repairs, lambda_stream::batch(event)).await;
            anyhow::ensure!(
                retry.is_empty() && stats.applied == SIZE,
                "projector failed: {stats:?}"
            );
            applied += stats.applied;
        }
        Ok(applied)
    }))
    .await?;
    let seconds = start.elapsed().as_secs_f64();
    let records: usize = applied.iter().sum();
    let mut by_command = server_usec_by_command(stats).await?;
    let usec = by_command.remove("evalsha").unwrap_or_default();
    let per_record = |us: f64| us / records.max(1) as f64;
    // What the scripts ran (`info` is their lineage check), not the bench's reset.
    by_command.remove("config|resetstat");
    let inner: f64 = by_command.values().sum();
    let mut redis_us_per_record_by_command: BTreeMap<String, f64> = by_command
        .into_iter()
        .map(|(name, us)| (name, per_record(us)))
        .filter(|(_, us)| *us >= 0.01)
        .collect();
    redis_us_per_record_by_command.insert("script".into(), per_record(usec - inner));
    let rate = Sharded {
        shards: streams.len(),
        records,
        seconds,
        records_per_s: (records as f64 / seconds).round(),
        redis_us_per_record: per_record(usec),
        redis_us_per_record_by_command,
    };
    println!(
        "{:>28}: {} records in {:.2} s = {:.0} records/s ({:.1} us in Redis each)",
        format!("projector, {} shards{label}", rate.shards),
        rate.records,
        rate.seconds,
        rate.records_per_s,
        rate.redis_us_per_record
    );
    Ok(rate)
}

/// The projector in batches of 1,000 on a board that keeps no dense ranks (loaded like
/// the main board): the same moves, without the distinct scores' upkeep.
pub async fn projector_without_dense(
    ctx: &AppContext,
    stats: &mut ConnectionManager,
    lb: &LeaderboardId,
    players: &[Player],
    count: usize,
) -> anyhow::Result<(Summary, f64)> {
    let mut rng = Rng::new(11);
    let mut version = 1_000_000u64;
    let events = batches(lb, players, 1_000, count + 5, &mut rng, &mut version);
    projector_batches(ctx, stats, " without dense ranks", &events, 1_000).await
}
