//! Rebuilds, degraded reads and the circuit breaker, against real redis-server and
//! DynamoDB (moto) processes.

use leaderboard_core::store::{IndexReads, IndexUpkeep};
use std::time::{Duration, Instant};

use futures::future::join_all;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::projector::project;
use leaderboard_core::service::rebuild::{self, Outcome, RebuildRequest};
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::service::{Context, reads};
use leaderboard_core::store::Health;
use leaderboard_core::store::IndexError;
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankMode};

use crate::support::{OwnDynamo, OwnRedis, Rng, TestEnv, batch, free_port, player, uncached};

/// `players` players with two improving writes each, through ingest.
async fn scripted_board(env: &TestEnv, players: u64) -> LeaderboardId {
    let b = env.board(Policy::Best).await;
    script(env, &b, players).await;
    b
}

/// Two improving writes for each of `players` players on `b`, through ingest.
async fn script(env: &TestEnv, b: &LeaderboardId, players: u64) {
    for round in 1..=2_i64 {
        join_all((0..players).map(|p| async move {
            env.submit(
                b,
                &format!("p{p:03}"),
                &format!("m{round}"),
                round * 1000 + (p as i64 * 37) % 500,
            )
            .await
            .unwrap()
        }))
        .await;
    }
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

async fn rebuild_once(
    env: &TestEnv,
    b: &LeaderboardId,
    deadline: Instant,
) -> rebuild::BoardRebuild {
    let req = RebuildRequest {
        leaderboard_id: Some(b.clone()),
        ..Default::default()
    };
    let report = rebuild::run(&env.ctx, req, deadline).await.unwrap();
    report.boards.into_iter().next().unwrap()
}

async fn health(env: &TestEnv, b: &LeaderboardId) -> Health {
    env.ctx.index.health(std::slice::from_ref(b)).await.unwrap()[0]
}

#[tokio::test]
async fn a_wiped_board_reads_degraded_from_dynamodb_until_a_rebuild_restores_it_exactly() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env, 30).await;
    let before = reads::top(&env.ctx, &b, 50, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(before.meta.source).unwrap(), "redis");

    env.wipe_index(&b).await;
    assert_eq!(health(&env, &b).await, Health::Missing);
    // A write after the wipe lands in Redis, but the board is not trusted until rebuilt.
    env.submit(&b, "late", "m1", 5).await.unwrap();
    let degraded = reads::top(&env.ctx, &b, 50, RankMode::Unique)
        .await
        .unwrap();
    assert!(degraded.meta.degraded);
    assert_eq!(
        serde_json::to_value(degraded.meta.source).unwrap(),
        "dynamodb"
    );
    assert_eq!(degraded.total, 31);
    let players = |r: &reads::TopReply| {
        r.entries
            .iter()
            .map(|e| (e.player_id.clone(), e.score))
            .collect::<Vec<_>>()
    };
    assert_eq!(players(&degraded)[..30], players(&before)[..]);
    let rank = reads::rank(
        &env.ctx,
        &Caller::default(),
        &b,
        &player("p007"),
        2,
        RankMode::Unique,
    )
    .await
    .unwrap();
    assert!(rank.meta.degraded);

    let done = rebuild_once(&env, &b, far()).await;
    assert_eq!((done.outcome, done.loaded), (Outcome::Rebuilt, 31));
    assert_eq!(health(&env, &b).await, Health::Ready);
    assert_eq!(env.assert_index_matches_store(&b).await, 31);
    let after = reads::top(&env.ctx, &b, 50, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(after.meta.source).unwrap(), "redis");
    assert_eq!(players(&after), players(&degraded));
}

/// A board without dense ranks never holds distinct scores: not through ingest, not
/// after a wipe whose unmarked board keeps them for the writes that land meanwhile,
/// not after the rebuild, which reads its setting from DynamoDB. Its places stay exact
/// and a dense read is refused, before and after.
#[tokio::test]
async fn a_board_without_dense_ranks_is_rebuilt_exactly_without_its_distinct_scores() {
    let env = TestEnv::new().await;
    let b = env.board_with(Policy::Best, false).await;
    script(&env, &b, 30).await;
    assert!(!env.distinct_kept(&b).await);
    let dense = async || reads::top(&env.ctx, &b, 50, RankMode::Dense).await;
    assert!(
        matches!(dense().await, Err(ServiceError::Domain(_))),
        "dense refused"
    );

    env.wipe_index(&b).await;
    env.submit(&b, "late", "m1", 5).await.unwrap();
    assert!(env.distinct_kept(&b).await, "an unmarked board keeps them");
    let done = rebuild_once(&env, &b, far()).await;
    assert_eq!((done.outcome, done.loaded), (Outcome::Rebuilt, 31));
    assert_eq!(health(&env, &b).await, Health::Ready);
    assert!(!env.distinct_kept(&b).await, "the rebuild dropped them");
    assert_eq!(env.assert_index_matches_store(&b).await, 31);
    env.submit(&b, "later", "m1", 1_999).await.unwrap();
    assert!(!env.distinct_kept(&b).await);
    let rank = reads::rank(
        &env.ctx,
        &Caller::default(),
        &b,
        &player("later"),
        0,
        RankMode::Competition,
    )
    .await
    .unwrap();
    let above = env
        .standings(&b)
        .await
        .iter()
        .filter(|s| s.score.get() > 1_999)
        .count() as u64;
    assert_eq!(rank.global_rank, above + 1, "{rank:?}");
    assert!(matches!(dense().await, Err(ServiceError::Domain(_))));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rebuild_resumes_across_invocations_while_writes_land_and_misses_none_at_the_swap() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env, 60).await;
    env.wipe_index(&b).await;
    // An exhausted budget: every invocation loads one page and checkpoints.
    let rebuilding = async {
        let mut invocations = 0;
        loop {
            invocations += 1;
            let one = rebuild_once(&env, &b, Instant::now()).await;
            if one.outcome == Outcome::Rebuilt {
                return invocations;
            }
            assert_eq!(one.outcome, Outcome::InProgress);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    // Meanwhile players improve, through ingest with its write-through.
    let writing = async {
        for round in 3..=6_i64 {
            join_all((0..60).step_by(3).map(|p| {
                let (env, b) = (&env, &b);
                async move {
                    env.submit(b, &format!("p{p:03}"), &format!("m{round}"), round * 1000)
                        .await
                        .unwrap()
                }
            }))
            .await;
        }
    };
    let (invocations, ()) = tokio::join!(rebuilding, writing);
    assert!(
        invocations > 2,
        "the budget forced several invocations ({invocations})"
    );
    // Every committed write is in the swapped-in index.
    assert_eq!(env.assert_index_matches_store(&b).await, 60);
    assert_eq!(health(&env, &b).await, Health::Ready);
}

#[tokio::test]
async fn a_wipe_during_a_rebuild_makes_it_start_over_and_still_end_exact() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env, 40).await;
    env.wipe_index(&b).await;
    let first = rebuild_once(&env, &b, Instant::now()).await;
    assert_eq!(first.outcome, Outcome::InProgress);
    // Redis loses everything mid-rebuild, the rebuild's keys included.
    let (z, h) = env.ctx.index.keys(&b);
    let m = env.ctx.index.marker_key(&b);
    let mut conn = env.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(&z)
        .arg(&h)
        .arg(&m)
        .arg(z.replace(":z", ":tz"))
        .arg(h.replace(":h", ":th"))
        .query_async(&mut conn)
        .await
        .unwrap();
    let again = rebuild_once(&env, &b, far()).await;
    assert_eq!(
        (again.outcome, again.loaded),
        (Outcome::Rebuilt, 40),
        "started over from shard 0"
    );
    assert_eq!(env.assert_index_matches_store(&b).await, 40);
}

#[tokio::test]
async fn the_sweep_finds_and_rebuilds_only_the_boards_whose_index_is_missing() {
    let env = TestEnv::new().await;
    let wiped = scripted_board(&env, 10).await;
    let fine = scripted_board(&env, 10).await;
    env.wipe_index(&wiped).await;
    let req = RebuildRequest {
        all: true,
        ..Default::default()
    };
    let report = rebuild::run(&env.ctx, req, far()).await.unwrap();
    assert!(report.done);
    let rebuilt: Vec<_> = report
        .boards
        .iter()
        .map(|r| r.leaderboard_id.clone())
        .collect();
    assert_eq!(rebuilt, std::slice::from_ref(&wiped));
    assert_eq!(health(&env, &wiped).await, Health::Ready);
    assert_eq!(env.assert_index_matches_store(&wiped).await, 10);
    assert_eq!(env.assert_index_matches_store(&fine).await, 10);
}

#[tokio::test]
async fn the_same_stream_batch_three_times_out_of_order_across_a_rebuild_changes_nothing() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env, 25).await;
    let records = env.stream_records().await;
    let before = env.index_snapshot(&b).await;
    let mut rng = Rng::new(42);
    let mut shuffled = records.clone();
    rng.shuffle(&mut shuffled);
    project(
        &env.ctx.index,
        &Reporter::default(),
        batch(shuffled.clone()),
    )
    .await;
    // Mid-rebuild (one page loaded), the batch again, reversed.
    env.wipe_index(&b).await;
    assert_eq!(
        rebuild_once(&env, &b, Instant::now()).await.outcome,
        Outcome::InProgress
    );
    let mut reversed = records.clone();
    reversed.reverse();
    project(&env.ctx.index, &Reporter::default(), batch(reversed)).await;
    assert_eq!(
        rebuild_once(&env, &b, far()).await.outcome,
        Outcome::Rebuilt
    );
    // And a third time after the swap.
    project(&env.ctx.index, &Reporter::default(), batch(shuffled)).await;
    assert_eq!(env.index_snapshot(&b).await, before);
    assert_eq!(env.assert_index_matches_store(&b).await, 25);
}

/// A context whose Redis is at `redis_url` with a 50 ms budget.
fn context_with_redis(env: &TestEnv, redis_url: &str) -> leaderboard::wiring::AppContext {
    Context::new(
        env.ctx.store.clone(),
        RedisRankIndex::new(redis_url, &env.prefix, Duration::from_millis(50)).unwrap(),
        uncached(),
    )
}

#[tokio::test]
async fn with_redis_down_every_read_is_answered_from_dynamodb_and_flagged() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env, 20).await;
    let down = context_with_redis(&env, &format!("redis://127.0.0.1:{}", free_port()));
    let p = player("p005");

    let live_rank = reads::rank(&env.ctx, &Caller::default(), &b, &p, 3, RankMode::Unique)
        .await
        .unwrap();
    let rank = reads::rank(&down, &Caller::default(), &b, &p, 3, RankMode::Unique)
        .await
        .unwrap();
    assert!(rank.meta.degraded);
    assert_eq!(
        (rank.global_rank, rank.total, rank.score),
        (live_rank.global_rank, live_rank.total, live_rank.score)
    );
    assert_eq!(rank.neighbors, live_rank.neighbors);

    let live_top = reads::top(&env.ctx, &b, 7, RankMode::Unique).await.unwrap();
    let top = reads::top(&down, &b, 7, RankMode::Unique).await.unwrap();
    assert!(top.meta.degraded);
    assert_eq!(
        (top.total, &top.entries),
        (live_top.total, &live_top.entries)
    );

    let signer = leaderboard_rules::cursor::CursorSigner::new("s");
    let live_page = reads::ranks(&env.ctx, &signer, &b, None, 6, RankMode::Unique)
        .await
        .unwrap();
    let page = reads::ranks(&down, &signer, &b, None, 6, RankMode::Unique)
        .await
        .unwrap();
    assert!(page.meta.degraded);
    assert_eq!(page.entries, live_page.entries);
    let next = reads::ranks(
        &down,
        &signer,
        &b,
        page.next_cursor.as_deref(),
        6,
        RankMode::Unique,
    )
    .await
    .unwrap();
    assert_eq!(next.entries.first().map(|e| e.rank), Some(7));

    // After a few failed calls the breaker answers at once, without waiting the budget.
    let dead = RedisRankIndex::new(
        &format!("redis://127.0.0.1:{}", free_port()),
        "x:",
        Duration::from_millis(50),
    )
    .unwrap();
    for _ in 0..leaderboard::adapters::redis::BREAKER_THRESHOLD {
        assert!(
            dead.top(BoardOrder::new(&b, Direction::Desc), 1)
                .await
                .is_err()
        );
    }
    assert!(matches!(
        dead.top(BoardOrder::new(&b, Direction::Desc), 1).await,
        Err(IndexError::CircuitOpen)
    ));
}

#[tokio::test]
async fn with_redis_and_dynamodb_down_the_last_known_answer_is_served_with_its_age() {
    let mut redis = OwnRedis::reserve();
    redis.start().await.unwrap();
    let mut dynamo = OwnDynamo::start_new().await.unwrap();
    let env = TestEnv::attach(&redis.url(), &dynamo.url(), "faults", "k:").await;
    env.ctx.store.create_table().await.unwrap();
    let b = scripted_board(&env, 5).await;
    let ctx = context_with_redis(&env, &redis.url());
    let fresh = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    assert_eq!(serde_json::to_value(fresh.meta.source).unwrap(), "redis");

    redis.pause();
    let degraded = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    assert_eq!(
        serde_json::to_value(degraded.meta.source).unwrap(),
        "dynamodb"
    );

    dynamo.stop();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let stale = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    assert_eq!(serde_json::to_value(stale.meta.source).unwrap(), "cache");
    assert!(stale.meta.degraded && stale.meta.stale_ms.is_some());
    assert_eq!(stale.entries, fresh.entries);
    // A read never answered before has nothing to fall back on: 503.
    let err = reads::rank(
        &ctx,
        &Caller::default(),
        &b,
        &player("p001"),
        1,
        RankMode::Unique,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, ServiceError::Store(_) | ServiceError::Index(_)),
        "{err:?}"
    );
    assert_eq!(leaderboard::edge::reply::status_and_code(&err).0, 503);
    redis.resume();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_of_a_board_past_the_count_cap_are_estimated_from_its_sketch_and_say_so() {
    const PLAYERS: u64 = 6_000;
    const { assert!(PLAYERS > reads::COUNT_CAP) };
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    env.seed_standings(&b, PLAYERS).await.unwrap();
    assert_eq!(
        rebuild_once(&env, &b, far()).await.outcome,
        Outcome::Rebuilt
    );
    let mut truth = env.standings(&b).await;
    truth.sort_by(|x, y| {
        x.index_entry()
            .key
            .cmp_in(&y.index_entry().key, Direction::Desc)
    });
    let rank_of = |p: &str| {
        truth
            .iter()
            .position(|s| s.player_id.as_str() == p)
            .unwrap() as u64
            + 1
    };
    let (top_player, deep_players) = (
        truth[3].player_id.clone(),
        [4_800_usize, 5_500, 5_999].map(|i| truth[i].player_id.clone()),
    );
    // Redis is down: reads come from DynamoDB.
    let down = context_with_redis(&env, &format!("redis://127.0.0.1:{}", free_port()));

    // No sketch yet: a rank past the cap is not guessed.
    let err = reads::rank(
        &down,
        &Caller::default(),
        &b,
        &deep_players[1],
        1,
        RankMode::Unique,
    )
    .await
    .unwrap_err();
    assert_eq!(err.code(), "rank_unavailable", "{err:?}");
    assert_eq!(leaderboard::edge::reply::status_and_code(&err).0, 503);

    // The sweep takes the big board's sketch.
    let req = RebuildRequest {
        all: true,
        ..Default::default()
    };
    rebuild::run(&env.ctx, req, far()).await.unwrap();
    let sketch = leaderboard_core::store::SketchStore::get_sketch(&env.ctx.store, &b)
        .await
        .unwrap()
        .expect("a sketch of the big board");
    assert_eq!(sketch.total, PLAYERS);

    // Near the top: counted, exact; the total is the sketch's, and says so.
    let top = reads::rank(
        &down,
        &Caller::default(),
        &b,
        &top_player,
        2,
        RankMode::Unique,
    )
    .await
    .unwrap();
    assert!(top.meta.degraded);
    assert_eq!(top.global_rank, 4);
    assert!(!top.meta.rank_approximate && top.meta.total_approximate);
    assert_eq!(top.total, PLAYERS);
    // Deep: estimated within half a gap between marks, and flagged.
    let gap = PLAYERS.div_ceil(leaderboard_core::service::sketch::MARKS);
    for p in &deep_players {
        let r = reads::rank(&down, &Caller::default(), &b, p, 1, RankMode::Unique)
            .await
            .unwrap();
        assert!(r.meta.rank_approximate, "{p}");
        assert!(
            r.global_rank.abs_diff(rank_of(p.as_str())) <= gap / 2 + 1,
            "{p}: estimated {} for {}",
            r.global_rank,
            rank_of(p.as_str())
        );
        assert_eq!(
            r.score.get(),
            truth[rank_of(p.as_str()) as usize - 1].score.get()
        );
    }
    // The top of the board is exact; only its total is an estimate.
    let page = reads::top(&down, &b, 10, RankMode::Unique).await.unwrap();
    let want: Vec<String> = truth[..10]
        .iter()
        .map(|s| s.player_id.to_string())
        .collect();
    let got: Vec<String> = page.entries.iter().map(|e| e.player_id.clone()).collect();
    assert_eq!(got, want);
    assert!(page.meta.total_approximate && !page.meta.rank_approximate);
    // And in JSON, the flags clients see.
    let json = serde_json::to_value(&page).unwrap();
    assert_eq!(json["total_approximate"], true);
    assert!(json.get("rank_approximate").is_none());
}
