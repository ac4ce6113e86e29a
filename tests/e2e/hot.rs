//! Hot-spot protection: the reply cache with single-flight coalescing, the top window,
//! the rate limits, and freshness of a player's own reads with all of them on.

use leaderboard_core::store::{IndexReads, IndexWrites};
use std::time::Duration;

use futures::future::join_all;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard_core::service::{Context, Settings, reads};
use leaderboard_core::store::{IndexEntry, TOP_WINDOW};
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::order::{BoardOrder, Direction, RankMode};
use serde_json::json;

use crate::support::{
    FixedFriends, OwnRedis, Rng, Stack, TestEnv, eventually, player, redis_url, score, unique,
};

/// Calls of `command` the server has served since its stats were reset.
async fn calls(redis: &mut redis::aio::MultiplexedConnection, command: &str) -> u64 {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(redis)
        .await
        .unwrap();
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("cmdstat_{command}:calls=")))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

async fn reset_stats(redis: &mut redis::aio::MultiplexedConnection) {
    let _: () = redis::cmd("CONFIG")
        .arg("RESETSTAT")
        .query_async(redis)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_thousand_identical_reads_in_one_container_make_one_redis_call_per_ttl() {
    // A server of the test's own, so its command counters see only this test.
    let mut own = OwnRedis::reserve();
    own.start().await.unwrap();
    let env = TestEnv::new().await;
    let ttl = Duration::from_millis(400);
    let ctx = Context::new(
        env.ctx.store.clone(),
        RedisRankIndex::new(&own.url(), &env.prefix, Duration::from_secs(2)).unwrap(),
        Settings {
            read_cache_ttl: ttl,
            ..Settings::default()
        },
    );
    let b = env.board(Policy::Best).await;
    ctx.index.init_board(&b, None, true).await.unwrap();
    for i in 0..20 {
        ctx.index
            .apply(&IndexEntry {
                metadata: None,
                board: b.clone(),
                direction: Direction::Desc,
                key: leaderboard_rules::order::RankKey {
                    ties: leaderboard_rules::tiebreak::Ties::none(),
                    score: score(1000 - i),
                    reached_at: 1,
                    player: format!("p{i:02}"),
                },
                version: 1,
                expire_at: None,
                kind: leaderboard_core::store::EntryKind::Standing,
            })
            .await
            .unwrap();
    }
    let celebrity = player("p05");
    let viewer = Caller::default();
    let friends = FixedFriends(vec![player("p01"), player("p09")]);
    // Warm the board definition and the server's script cache, so that only the
    // reads' own index calls remain to count.
    reads::top(&ctx, &b, 10, RankMode::Unique).await.unwrap();
    reads::rank(&ctx, &viewer, &b, &celebrity, 5, RankMode::Unique)
        .await
        .unwrap();
    reads::friends_rank(&ctx, &friends, &viewer, &b, &celebrity, 2, RankMode::Unique)
        .await
        .unwrap();
    let mut conn = redis::Client::open(own.url())
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap();

    for round in 1..=2u64 {
        tokio::time::sleep(ttl + Duration::from_millis(50)).await;
        reset_stats(&mut conn).await;
        let ranks = join_all(
            (0..1000).map(|_| reads::rank(&ctx, &viewer, &b, &celebrity, 5, RankMode::Unique)),
        );
        let tops = join_all((0..1000).map(|_| reads::top(&ctx, &b, 10, RankMode::Unique)));
        let groups = join_all((0..1000).map(|_| {
            reads::friends_rank(&ctx, &friends, &viewer, &b, &celebrity, 2, RankMode::Unique)
        }));
        let (ranks, tops, groups) = tokio::join!(ranks, tops, groups);
        assert!(
            ranks.iter().all(|r| r.as_ref().unwrap().global_rank == 6),
            "round {round}"
        );
        assert!(tops.iter().all(|t| t.as_ref().unwrap().entries.len() == 10));
        assert!(
            groups
                .iter()
                .all(|g| g.as_ref().unwrap().friends_rank == Some(2))
        );
        // One script call each for the rank and the top window (their rows' names read
        // in the same call), two for friends-rank: the friends' keys, then the cards of
        // the rows it shows (docs/profiles.md).
        assert_eq!(calls(&mut conn, "evalsha").await, 4, "round {round}");
        let cached = ranks
            .iter()
            .filter(|r| serde_json::to_value(r.as_ref().unwrap().meta.source).unwrap() == "cache")
            .count();
        assert_eq!(cached, 999, "all but the loading read say source: cache");
    }

    // The player's own read bypasses the cache: every one reaches Redis.
    reset_stats(&mut conn).await;
    let me = Caller {
        player: Some(celebrity.clone()),
        ip: None,
    };
    for _ in 0..3 {
        reads::rank(&ctx, &me, &b, &celebrity, 5, RankMode::Unique)
            .await
            .unwrap();
    }
    assert_eq!(calls(&mut conn, "evalsha").await, 3);
}

/// A standing of `player` on `b` (descending, all reached at the same time).
fn standing(
    b: &leaderboard_rules::ids::LeaderboardId,
    player: String,
    value: i64,
    version: u64,
) -> IndexEntry {
    IndexEntry {
        metadata: None,
        board: b.clone(),
        direction: Direction::Desc,
        key: leaderboard_rules::order::RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: score(value),
            reached_at: 1,
            player,
        },
        version,
        expire_at: None,
        kind: leaderboard_core::store::EntryKind::Standing,
    }
}

/// The top `n` straight from the sorted set, to compare the window against.
async fn plain_top(
    env: &TestEnv,
    b: &leaderboard_rules::ids::LeaderboardId,
    n: u64,
) -> Vec<String> {
    let (keys, _) = env
        .ctx
        .index
        .top(BoardOrder::new(b, Direction::Desc), n)
        .await
        .unwrap();
    keys.into_iter().map(|k| k.player).collect()
}

#[tokio::test]
async fn the_top_window_follows_every_change_inside_it_and_ignores_the_rest() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    let n = TOP_WINDOW + 200;
    let entry = |i: u64, value: i64, version: u64| standing(&b, format!("p{i:05}"), value, version);
    let all: Vec<_> = (0..n).map(|i| entry(i, (n - i) as i64 * 10, 1)).collect();
    env.ctx.index.apply_many(&all).await.unwrap();
    let first = env
        .ctx
        .index
        .top_window(BoardOrder::new(&b, Direction::Desc), None, 0, false)
        .await
        .unwrap();
    assert_eq!(first.entries.as_ref().unwrap().len() as u64, TOP_WINDOW);
    assert_eq!(first.total, n);
    let unchanged = |version: &str| {
        let version = version.to_owned();
        let env = &env;
        let b = &b;
        async move {
            let w = env
                .ctx
                .index
                .top_window(
                    BoardOrder::new(b, Direction::Desc),
                    Some(&version),
                    0,
                    false,
                )
                .await
                .unwrap();
            (w.entries.is_none(), w.version, w.total)
        }
    };
    // A change far below the window and a new player at the bottom: same version.
    env.ctx.index.apply(&entry(n - 10, 15, 2)).await.unwrap();
    env.ctx.index.apply(&entry(n + 1, 1, 1)).await.unwrap();
    let (same, v, total) = unchanged(&first.version).await;
    assert!(same && v == first.version && total == n + 1);
    // A player from below the window jumps into it: new version.
    env.ctx
        .index
        .apply(&entry(n - 5, 1_000_000, 2))
        .await
        .unwrap();
    let (same, v2, _) = unchanged(&first.version).await;
    assert!(!same && v2 != first.version);
    // A player inside the window drops out of it: new version again.
    env.ctx.index.apply(&entry(3, 2, 2)).await.unwrap();
    let (same, v3, _) = unchanged(&v2).await;
    assert!(!same && v3 != v2);

    // Through the use case: top reads and pages inside the window agree with the set
    // after random changes in and out of the window.
    let mut rng = Rng::new(7);
    for round in 0..30u64 {
        let i = rng.below(n);
        let value = rng.below(n * 10) as i64;
        env.ctx
            .index
            .apply(&entry(i, value, 10 + round))
            .await
            .unwrap();
        let top = reads::top(&env.ctx, &b, 100, RankMode::Unique)
            .await
            .unwrap();
        let got: Vec<_> = top.entries.iter().map(|e| e.player_id.clone()).collect();
        assert_eq!(got, plain_top(&env, &b, 100).await, "round {round}");
    }
    let signer = leaderboard_rules::cursor::CursorSigner::new("secret-for-tests-only");
    let mut walked = Vec::new();
    let mut cursor: Option<String> = None;
    while walked.len() < TOP_WINDOW as usize {
        let page = reads::ranks(
            &env.ctx,
            &signer,
            &b,
            cursor.as_deref(),
            250,
            RankMode::Unique,
        )
        .await
        .unwrap();
        walked.extend(page.entries.iter().map(|e| e.player_id.clone()));
        cursor = page.next_cursor;
    }
    assert_eq!(walked, plain_top(&env, &b, TOP_WINDOW).await);

    // A wiped index rebuilt from DynamoDB starts a new version even if the old number
    // could come back: the version restarts from the server clock.
    let before = env
        .ctx
        .index
        .top_window(BoardOrder::new(&b, Direction::Desc), None, 0, false)
        .await
        .unwrap();
    env.wipe_index(&b).await;
    env.ctx.index.init_board(&b, None, true).await.unwrap();
    env.ctx.index.apply(&entry(0, 5, 99)).await.unwrap();
    let after = env
        .ctx
        .index
        .top_window(
            BoardOrder::new(&b, Direction::Desc),
            Some(&before.version),
            0,
            false,
        )
        .await
        .unwrap();
    assert_ne!(after.version, before.version);
    assert_eq!(after.entries.unwrap().len(), 1);
    let top = reads::top(&env.ctx, &b, 10, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(top.total, 1);
}

/// The window's entries and its version, read afresh.
async fn window_now(
    env: &TestEnv,
    b: &leaderboard_rules::ids::LeaderboardId,
) -> (Vec<leaderboard_rules::order::RankKey>, String) {
    let w = env
        .ctx
        .index
        .top_window(BoardOrder::new(b, Direction::Desc), None, 0, false)
        .await
        .unwrap();
    (w.entries.unwrap(), w.version)
}

fn players_of(keys: &[leaderboard_rules::order::RankKey]) -> Vec<String> {
    keys.iter().map(|k| k.player.clone()).collect()
}

#[tokio::test]
async fn a_stream_batch_moves_the_window_version_exactly_when_the_window_changes_ties_included() {
    // Scores in threes (ties ordered by player id), so the window's last place shares its
    // score with players on both sides of it.
    let env = TestEnv::new().await;
    let b = env.board(Policy::Latest).await;
    let n = TOP_WINDOW + 300;
    let value_of = |i: u64| ((n - i) / 3) as i64 * 10;
    let entry = |player: String, value: i64, version: u64| standing(&b, player, value, version);
    let id = |i: u64| format!("p{i:05}");
    let all: Vec<_> = (0..n).map(|i| entry(id(i), value_of(i), 1)).collect();
    env.ctx.index.apply_many(&all).await.unwrap();
    let (window, v0) = window_now(&env, &b).await;
    let edge = TOP_WINDOW - 1;
    assert_eq!(window.last().map(|k| &k.player), Some(&id(edge)));

    // Many changes below the window, one of them onto the edge's own score behind it (a
    // larger id), and a newer version of an unchanged entry inside: same version.
    let mut below: Vec<_> = (0..50).map(|j| entry(id(n - 1 - j), j as i64, 2)).collect();
    below.push(entry(id(n - 60), value_of(edge), 2));
    below.push(entry(id(5), value_of(5), 2));
    let applied = env.ctx.index.apply_many(&below).await.unwrap();
    assert!(applied.applied.iter().all(|a| *a), "every change applied");
    let (same, v1) = window_now(&env, &b).await;
    assert_eq!((&same, &v1), (&window, &v0), "nothing inside moved");

    // The same below, then one newcomer onto the edge's score ahead of it (a smaller id):
    // it takes the last place and the version moves.
    let mut batch: Vec<_> = (0..50)
        .map(|j| entry(id(n - 1 - j), 100 + j as i64, 3))
        .collect();
    batch.push(entry("a-newcomer".to_owned(), value_of(edge), 1));
    env.ctx.index.apply_many(&batch).await.unwrap();
    let (moved, v2) = window_now(&env, &b).await;
    let players = players_of(&moved);
    assert!(players.contains(&"a-newcomer".to_owned()) && !players.contains(&id(edge)));
    assert_ne!(v2, v1);

    // Random batches, every other one only below the window (players outside it moved
    // to the bottom): the version moves exactly when the window's players change.
    let mut rng = Rng::new(11);
    let everyone: Vec<String> = (0..n).map(id).chain(["a-newcomer".to_owned()]).collect();
    let (mut before, mut version) = (moved, v2);
    let mut unchanged_rounds = 0;
    for round in 0..40u64 {
        let inside = players_of(&before);
        let outside: Vec<&String> = everyone.iter().filter(|p| !inside.contains(p)).collect();
        let batch: Vec<_> = (0..200)
            .map(|_| {
                if round % 2 == 0 {
                    let p = everyone[rng.below(everyone.len() as u64) as usize].clone();
                    entry(p, rng.below(n * 4) as i64, 10 + round)
                } else {
                    let p = outside[rng.below(outside.len() as u64) as usize].clone();
                    entry(p, rng.below(10) as i64, 10 + round)
                }
            })
            .collect();
        env.ctx.index.apply_many(&batch).await.unwrap();
        let (after, v) = window_now(&env, &b).await;
        assert_eq!(
            players_of(&after),
            plain_top(&env, &b, TOP_WINDOW).await,
            "round {round}"
        );
        if after != before {
            assert_ne!(
                v, version,
                "round {round}: the window changed, its version must"
            );
        } else {
            unchanged_rounds += 1;
            assert_eq!(v, version, "round {round}: nothing inside moved");
        }
        (before, version) = (after, v);
    }
    assert!(
        unchanged_rounds >= 10,
        "batches below the window left it alone"
    );
}

#[tokio::test]
async fn reads_over_the_limit_get_429_with_retry_after_and_writes_never_do() {
    let stack = Stack::start_with(
        &redis_url(),
        &[
            ("READS_PER_PLAYER_PER_S", "3"),
            ("READS_PER_IP_PER_S", "40"),
        ],
    )
    .await
    .unwrap();
    let board = unique("hot");
    let (status, _) = stack
        .post("/leaderboards", json!({"leaderboard_id": board}))
        .await
        .unwrap();
    assert_eq!(status, 201);
    // Writes are not limited: 30 results for one player in a burst all land.
    let score_path = format!("/leaderboards/{board}/players/alice/score");
    let writes = join_all((0..30).map(|i| {
        stack.post(
            &score_path,
            json!({"new_score": i, "match_id": format!("m{i}")}),
        )
    }))
    .await;
    assert!(writes.iter().all(|w| w.as_ref().unwrap().0 == 200));

    // A player's burst: at most 3 a second get through (two windows if the burst
    // straddles a boundary), the rest are 429 with Retry-After.
    let path = format!("/leaderboards/{board}/players/alice/rank");
    let burst = join_all((0..20).map(|_| stack.get_as(&path, "alice"))).await;
    let ok = burst
        .iter()
        .filter(|r| r.as_ref().unwrap().0 == 200)
        .count();
    assert!((3..=6).contains(&ok), "{ok} of 20 got through");
    for (status, head, body) in burst.iter().map(|r| r.as_ref().unwrap()) {
        if *status == 429 {
            assert_eq!(body["error"]["code"], "rate_limited");
            let wait: u64 = head["retry-after"].to_str().unwrap().parse().unwrap();
            assert!((1..=1).contains(&wait), "Retry-After {wait}");
        }
    }
    // Another player from the same address is not held back by alice's limit...
    let (status, _, _) = stack.get_as(&path, "bob").await.unwrap();
    assert_eq!(status, 200);
    // ...but the address has its own limit (100 players reading from it once each).
    let burst = join_all((0..100).map(|i| {
        let (stack, path) = (&stack, &path);
        async move { stack.get_as(path, &format!("viewer{i}")).await }
    }))
    .await;
    let limited = burst
        .iter()
        .filter(|r| r.as_ref().unwrap().0 == 429)
        .count();
    assert!(
        limited >= 20,
        "only {limited} of 100 reads from one address were limited"
    );
}

#[tokio::test]
async fn with_caches_on_a_players_own_write_shows_in_their_next_read() {
    // A longer reply cache than the default 250 ms, so that viewers' answers are
    // surely cached when the write lands, even on a loaded machine.
    let stack = Stack::start_with(&redis_url(), &[("READ_CACHE_TTL_MS", "2000")])
        .await
        .unwrap();
    let board = unique("fresh");
    let (status, _) = stack
        .post("/leaderboards", json!({"leaderboard_id": board}))
        .await
        .unwrap();
    assert_eq!(status, 201);
    for (i, p) in ["alice", "bob", "carol"].iter().enumerate() {
        let (status, _) = stack
            .post(
                &format!("/leaderboards/{board}/players/{p}/score"),
                json!({"new_score": 100 + i as i64, "match_id": "m0"}),
            )
            .await
            .unwrap();
        assert_eq!(status, 200);
    }
    let rank = format!("/leaderboards/{board}/players/alice/rank");
    let top = format!("/leaderboards/{board}/top?n=3");
    // Viewers fill the caches: the second identical read is served from them.
    for path in [&rank, &top] {
        let (_, _, first) = stack.get_as(path, "viewer").await.unwrap();
        let (_, _, second) = stack.get_as(path, "viewer").await.unwrap();
        assert_eq!(first["source"], "redis", "{path}");
        assert_eq!(second["source"], "cache", "{path}");
    }
    let mut stale_views = 0;
    for round in 1..=3 {
        let (status, written) = stack
            .post(
                &format!("/leaderboards/{board}/players/alice/score"),
                json!({"new_score": 1000 * round, "match_id": format!("w{round}")}),
            )
            .await
            .unwrap();
        assert_eq!((status, written["rank"].as_u64()), (200, Some(1)));
        // Alice's next read shows it at once, whatever the viewers' cache holds.
        let (_, _, mine) = stack.get_as(&rank, "alice").await.unwrap();
        assert_eq!(mine["score"], 1000 * round, "round {round}: {mine}");
        assert_eq!(
            (mine["global_rank"].as_u64(), mine["source"].as_str()),
            (Some(1), Some("redis"))
        );
        // A viewer may still get the cached answer for a while...
        let (_, _, viewer) = stack.get_as(&rank, "viewer").await.unwrap();
        stale_views += usize::from(viewer["score"] != 1000 * round);
        // ...and sees it within the cache's TTL.
        eventually(Duration::from_secs(4), "viewers see it", || async {
            let (_, _, v) = stack.get_as(&top, "viewer").await?;
            Ok((v["entries"][0]["score"] == 1000 * round).then_some(()))
        })
        .await
        .unwrap();
    }
    // The caches really were on: some viewer read right after a write was stale.
    assert!(stale_views >= 1);
}
