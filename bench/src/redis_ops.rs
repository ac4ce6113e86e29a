//! Our read and apply paths against the bare Redis commands that do the same job, from
//! the same client library on the same board (the projector's in `projector.rs`, reads
//! with names in `names.rs`).

use leaderboard_core::store::IndexWrites;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use aws_lambda_events::event::dynamodb::Event;
use leaderboard::edge::reply;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::hot::RateLimits;
use leaderboard_core::service::reads;
use leaderboard_core::store::FriendsSource;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankMode;
use redis::aio::ConnectionManager;
use serde::Serialize;

use crate::board::{BARE_HASH_KEY, BARE_LOAD_KEY, Player, Rng, entry, player_id};
use crate::names::{named_rank, named_top, seed_cards, without_names};
use crate::projector::{batches, moved, projector_batches};
use crate::stats::{Summary, measure, measure_pair};

/// One move of the bare floor: a player's old member out, the new one in at its score.
struct Move {
    player: String,
    score: i64,
    old: String,
    new: String,
}

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

/// A friends source that answers from memory, so the social graph is out of the loop.
struct Friends(Vec<PlayerId>);

impl FriendsSource for Friends {
    async fn friends_of(
        &self,
        _: &PlayerId,
    ) -> Result<Vec<PlayerId>, leaderboard_core::store::FriendsError> {
        Ok(self.0.clone())
    }
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
            Ok(reply::json(200, &reply))
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
        Ok(reply::json(200, &reply))
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
            Ok(reply::json(200, &reply))
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
        // What an exact index needs per move: the old member out, the new one in, the
        // hash's entry rewritten (each player's member tracked across the rounds).
        let (bare_z, bare_h) = (BARE_LOAD_KEY, BARE_HASH_KEY);
        let mut current: HashMap<usize, String> = HashMap::new();
        let rounds_of_moves: Vec<Vec<Move>> = (0..count + 5)
            .map(|r| {
                (0..size)
                    .map(|i| {
                        let at = rng.below(n) as usize;
                        let p = &players[at];
                        let next = moved(p, &mut rng, r * size + i);
                        let old = current
                            .insert(at, next.member())
                            .unwrap_or_else(|| p.member());
                        Move {
                            player: p.id.clone(),
                            score: -next.score,
                            old,
                            new: next.member(),
                        }
                    })
                    .collect()
            })
            .collect();
        let label = format!("{size} x ZREM+ZADD+HSET pipelined (bare)");
        let bare_batch = measure(&label, 5, count, |i| {
            let mut conn = bare.clone();
            let mut pipe = redis::pipe();
            for m in &rounds_of_moves[i] {
                pipe.zrem(bare_z, &m.old).ignore();
                pipe.zadd(bare_z, &m.new, m.score).ignore();
                pipe.hset(bare_h, &m.player, format!("2:{}", m.new))
                    .ignore();
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
