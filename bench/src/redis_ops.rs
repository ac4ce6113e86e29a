//! Our read, apply and projector paths against the bare Redis commands that do the same
//! job, from the same client library on the same board.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use leaderboard::board::Standing;
use leaderboard::caller::Caller;
use leaderboard::dynamodb::StandingItem;
use leaderboard::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard::order::{Direction, RankMode};
use leaderboard::service::hot::RateLimits;
use leaderboard::service::projector::project;
use leaderboard::service::reads;
use leaderboard::store::{FriendsSource, RankIndex};
use leaderboard::wiring::AppContext;
use leaderboard::{http, lambda_stream};
use redis::aio::ConnectionManager;
use serde::Serialize;

use crate::board::{BARE_LOAD_KEY, Player, Rng, entry, player_id};
use crate::stats::{Summary, measure, measure_pair};

/// Iterations per operation.
#[derive(Debug, Clone, Copy)]
pub struct Rounds {
    pub reads: usize,
    pub friends: usize,
    pub applies: usize,
    pub batches_100: usize,
    pub batches_1000: usize,
}

/// Ours and the bare commands for one operation.
#[derive(Debug, Clone, Serialize)]
pub struct Pair {
    pub ours: Summary,
    pub bare: Summary,
}

/// Everything this module measures.
#[derive(Debug, Clone, Serialize)]
pub struct RedisResults {
    pub rank_neighbours: Pair,
    pub top_100: Pair,
    pub friends_500: Pair,
    pub ingest_apply: Pair,
    pub projector_batch_100: Pair,
    pub projector_batch_1000: Pair,
    /// The part of a 1,000-record batch spent decoding the event JSON (ours only).
    pub projector_decode_1000: Summary,
    /// Redis server time (its own command stats) per 1,000-record batch of ours.
    pub projector_redis_us_per_batch_1000: f64,
    /// One rate-limit check (per player and per IP, one round trip); no bare twin.
    pub rate_limit_check: Summary,
    /// Rank + 10 neighbours and top-100 with names, each measured in turns with the same
    /// read through a context that puts no names on rows (`NAMES_ON_ROWS=false`).
    pub rank_with_names: Summary,
    pub rank_without_names: Summary,
    pub top_with_names: Summary,
    pub top_without_names: Summary,
}

/// Every player's card copied into the index, as it stands once the players were read
/// (steady state: a read with names finds every card in Redis).
async fn seed_cards(ctx: &AppContext, players: &[Player]) -> anyhow::Result<()> {
    use leaderboard::profile::Card;
    use leaderboard::store::VersionedCard;
    const COUNTRIES: [&str; 8] = ["SE", "US", "BR", "JP", "DE", "KR", "FR", "IN"];
    for chunk in players.chunks(5_000) {
        let cards: Vec<(PlayerId, VersionedCard)> = chunk
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let card = Card {
                    display_name: Some(format!("Player {}", p.id)),
                    avatar: Some(format!("avatars/{}.png", i % 64)),
                    country: Some(COUNTRIES[i % COUNTRIES.len()].to_owned()),
                };
                (player_id(p), VersionedCard { version: 1, card })
            })
            .collect();
        ctx.index.put_cards(&cards).await?;
    }
    Ok(())
}

/// A rank + 10 neighbours read, checked to show names or not as its context says.
async fn named_rank(
    ctx: &AppContext,
    lb: &LeaderboardId,
    p: PlayerId,
    named: bool,
) -> anyhow::Result<http::Response> {
    let reply = reads::rank(ctx, &Caller::default(), lb, &p, 5, RankMode::Unique).await?;
    let shown = reply.neighbors[0].card.display_name.is_some();
    anyhow::ensure!(shown == named, "names shown: {shown}");
    Ok(http::json(200, &reply))
}

/// A top-100 read, checked to show names or not as its context says.
async fn named_top(
    ctx: &AppContext,
    lb: &LeaderboardId,
    named: bool,
) -> anyhow::Result<http::Response> {
    let reply = reads::top(ctx, lb, 100, RankMode::Unique).await?;
    anyhow::ensure!(reply.entries.len() == 100, "short top");
    let shown = reply.entries[99].card.display_name.is_some();
    anyhow::ensure!(shown == named, "names shown: {shown}");
    Ok(http::json(200, &reply))
}

/// A context over the same table and Redis that puts no names on rows.
fn without_names(ctx: &AppContext, url: &str) -> anyhow::Result<AppContext> {
    let store =
        leaderboard::dynamodb::DynamoScoreStore::new(ctx.store.client().clone(), ctx.store.table());
    let index = leaderboard::redis::RedisRankIndex::new(url, "bench:", Duration::from_secs(5))?
        .without_names();
    let settings = leaderboard::service::Settings {
        names_on_rows: false,
        ..ctx.settings.clone()
    };
    Ok(leaderboard::service::Context::new(store, index, settings))
}

/// A friends source that answers from memory, so the social graph is out of the loop.
struct Friends(Vec<PlayerId>);

impl FriendsSource for Friends {
    async fn friends_of(
        &self,
        _: &PlayerId,
    ) -> Result<Vec<PlayerId>, leaderboard::store::FriendsError> {
        Ok(self.0.clone())
    }
}

/// A player's standing after a match result that moved it: a higher score, reached later
/// (as in the stream after most results: a result that changes nothing the index keeps
/// is cheaper to apply).
fn moved(p: &Player, rng: &mut Rng, seq: usize) -> Player {
    Player {
        id: p.id.clone(),
        score: p.score + 1 + rng.below(1_000_000) as i64,
        reached_at: p.reached_at + 1 + seq as i64,
    }
}

/// A stream record as the DynamoDB stream delivers a changed standing.
fn record(lb: &LeaderboardId, p: &Player, version: u64, seq: usize) -> EventRecord {
    let standing = Standing {
        ties: leaderboard::tiebreak::Ties::none(),
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
fn batches(
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
async fn projector_batches(
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

pub async fn run(
    ctx: &AppContext,
    url: &str,
    bare: &mut ConnectionManager,
    lb: &LeaderboardId,
    players: &[Player],
    rounds: Rounds,
) -> anyhow::Result<RedisResults> {
    let (z, h) = ctx.index.keys(lb);
    let n = players.len() as u64;
    let mut rng = Rng::new(7);
    let picks: Vec<usize> = (0..rounds.reads * 2 + 100)
        .map(|_| rng.below(n) as usize)
        .collect();
    let viewer = &Caller::default();
    seed_cards(ctx, players).await?;
    let plain = &without_names(ctx, url)?;

    println!("-- rank + 10 neighbours (k = 5)");
    let ours = measure("rank+neighbours (ours)", 100, rounds.reads, |i| {
        let p = &players[picks[i]];
        async move {
            let reply = reads::rank(ctx, viewer, lb, &player_id(p), 5, RankMode::Unique).await?;
            anyhow::ensure!(reply.neighbors.len() >= 6, "short neighbourhood");
            Ok(http::json(200, &reply))
        }
    })
    .await?;
    let bare_rank = measure("ZRANK + ZRANGE (bare)", 100, rounds.reads, |i| {
        let member = players[picks[i]].member();
        let (z, mut conn) = (z.clone(), bare.clone());
        async move {
            let r: u64 = redis::cmd("ZRANK")
                .arg(&z)
                .arg(&member)
                .query_async(&mut conn)
                .await?;
            let lo = r.saturating_sub(5);
            let rows: Vec<(String, f64)> = redis::cmd("ZRANGE")
                .arg(&z)
                .arg(lo)
                .arg(r + 5)
                .arg("WITHSCORES")
                .query_async(&mut conn)
                .await?;
            Ok(rows)
        }
    })
    .await?;

    let (rank_with_names, rank_without_names) = measure_pair(
        ("rank+neighbours (names)", "rank+neighbours (no names)"),
        100,
        rounds.reads,
        |i| named_rank(ctx, lb, player_id(&players[picks[i]]), true),
        |i| named_rank(plain, lb, player_id(&players[picks[i]]), false),
    )
    .await?;

    println!("-- top 100");
    let ours_top = measure("top-100 (ours)", 100, rounds.reads, |_| async move {
        let reply = reads::top(ctx, lb, 100, RankMode::Unique).await?;
        anyhow::ensure!(reply.entries.len() == 100, "short top");
        anyhow::ensure!(reply.entries[99].card.display_name.is_some(), "unnamed");
        Ok(http::json(200, &reply))
    })
    .await?;
    let (top_with_names, top_without_names) = measure_pair(
        ("top-100 (names)", "top-100 (no names)"),
        100,
        rounds.reads,
        |_| named_top(ctx, lb, true),
        |_| named_top(plain, lb, false),
    )
    .await?;
    let bare_top = measure("ZRANGE 0 99 + ZCARD (bare)", 100, rounds.reads, |_| {
        let (z, mut conn) = (z.clone(), bare.clone());
        async move {
            let rows: (Vec<(String, f64)>, u64) = redis::pipe()
                .zrange_withscores(&z, 0, 99)
                .zcard(&z)
                .query_async(&mut conn)
                .await?;
            Ok(rows)
        }
    })
    .await?;

    println!("-- friends-rank with 500 friends");
    let groups: Vec<Vec<usize>> = (0..50)
        .map(|_| (0..500).map(|_| rng.below(n) as usize).collect())
        .collect();
    let sources: Vec<Friends> = groups
        .iter()
        .map(|g| Friends(g.iter().map(|&i| player_id(&players[i])).collect()))
        .collect();
    // In turns with its bare twin: the two are a ratio's numerator and denominator.
    let ours_read = |i: usize| {
        let me = player_id(&players[picks[i]]);
        let friends = &sources[i % sources.len()];
        async move {
            let reply =
                reads::friends_rank(ctx, friends, viewer, lb, &me, 5, RankMode::Unique).await?;
            anyhow::ensure!(reply.friends_total >= 400, "friends missing");
            Ok(http::json(200, &reply))
        }
    };
    let bare_hmget = |i: usize| {
        let names: Vec<&str> = groups[i % groups.len()]
            .iter()
            .map(|&j| players[j].id.as_str())
            .collect();
        let (h, mut conn) = (h.clone(), bare.clone());
        async move {
            let values: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(&h)
                .arg(&names)
                .query_async(&mut conn)
                .await?;
            Ok(values)
        }
    };
    let (ours_friends, bare_friends) = measure_pair(
        ("friends-rank 500 (ours)", "HMGET 500 (bare)"),
        20,
        rounds.friends,
        ours_read,
        bare_hmget,
    )
    .await?;

    println!("-- ingest apply (write-through: version-checked apply + rank)");
    let mut version = 1_000_000u64;
    let ours_apply = measure("apply+rank (ours)", 100, rounds.applies, |i| {
        let p = &players[picks[i]];
        version += 1;
        let e = entry(lb, p, version);
        async move {
            let placed = ctx.index.apply(&e).await?;
            anyhow::ensure!(placed.applied, "stale version");
            Ok(placed)
        }
    })
    .await?;
    let bare_apply = measure("ZADD + ZRANK (bare)", 100, rounds.applies, |i| {
        let p = &players[picks[i]];
        let (score, member) = (-p.score, p.member());
        let (z, mut conn) = (z.clone(), bare.clone());
        async move {
            let r: (u64, u64) = redis::pipe()
                .zadd(&z, &member, score)
                .zrank(&z, &member)
                .query_async(&mut conn)
                .await?;
            Ok(r)
        }
    })
    .await?;

    println!(
        "-- projector batches (decode the event JSON, one pipeline of version-checked applies)"
    );
    let mut projector = BTreeMap::new();
    let mut decode = None::<crate::stats::Summary>;
    let mut redis_us_per_batch = None;
    for (size, count) in [(100, rounds.batches_100), (1_000, rounds.batches_1000)] {
        let events = batches(lb, players, size, count + 5, &mut rng, &mut version);
        let (ours, usec) = projector_batches(ctx, bare, "", &events, size).await?;
        if size == 1_000 {
            redis_us_per_batch = Some(usec);
        }
        // The same kind of change, bare, on the floor's sorted set (ours keeps its sorted
        // set, hash and distinct scores in step): each round moves other players to new
        // scores. Not on a COPY of the board: COPY lays a set out in memory in score
        // order, which makes its updates about twice as cheap as those of a set filled
        // in arrival order, like the board and a board in service (a ZADD moving a
        // member of a million: 2.7-2.9 us of server time on a copy, 5.0-5.7 us on the
        // original).
        let bare_z = BARE_LOAD_KEY;
        let rounds_of_members: Vec<Vec<(i64, String)>> = (0..count + 5)
            .map(|r| {
                (0..size)
                    .map(|i| {
                        let p = &players[rng.below(n) as usize];
                        (-moved(p, &mut rng, r * size + i).score, p.member())
                    })
                    .collect()
            })
            .collect();
        let bare_batch = measure(&format!("{size} x ZADD pipelined (bare)"), 5, count, |i| {
            let mut conn = bare.clone();
            let mut pipe = redis::pipe();
            for (s, m) in &rounds_of_members[i] {
                pipe.zadd(bare_z, m, *s).ignore();
            }
            async move {
                let _: () = pipe.query_async(&mut conn).await?;
                Ok(())
            }
        })
        .await?;
        projector.insert(
            size,
            Pair {
                ours,
                bare: bare_batch,
            },
        );
        if size == 1_000 {
            let split = measure("decode 1000 records (ours)", 2, count, |i| {
                let json = &events[i];
                async move { Ok(serde_json::from_slice::<Event>(json)?) }
            })
            .await?;
            decode = Some(split);
        }
    }

    println!("-- rate-limit check (per player and per IP, one round trip)");
    let limits = RateLimits {
        per_player: u64::MAX,
        per_ip: u64::MAX,
        window: Duration::from_secs(1),
    };
    let limit = measure("rate-limit check (ours)", 100, rounds.reads, |i| {
        let caller = Caller {
            player: Some(player_id(&players[picks[i]])),
            ip: Some(format!("10.0.{}.{}", i % 250, i % 200)),
        };
        let limits = &limits;
        async move {
            limits.check(&ctx.index, &caller).await?;
            Ok(())
        }
    })
    .await?;

    let mut projector = projector.into_values();
    Ok(RedisResults {
        rank_neighbours: Pair {
            ours,
            bare: bare_rank,
        },
        top_100: Pair {
            ours: ours_top,
            bare: bare_top,
        },
        friends_500: Pair {
            ours: ours_friends,
            bare: bare_friends,
        },
        ingest_apply: Pair {
            ours: ours_apply,
            bare: bare_apply,
        },
        projector_batch_100: projector.next().expect("measured"),
        projector_batch_1000: projector.next().expect("measured"),
        projector_decode_1000: decode.expect("measured"),
        projector_redis_us_per_batch_1000: redis_us_per_batch.expect("measured"),
        rate_limit_check: limit,
        rank_with_names,
        rank_without_names,
        top_with_names,
        top_without_names,
    })
}
