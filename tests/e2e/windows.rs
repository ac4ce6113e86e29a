//! Policies, board families, windows and the fan-out ingest, against real DynamoDB
//! (moto) and Redis.

use leaderboard_core::store::IndexReads;
use std::time::{Duration, Instant};

use futures::future::join_all;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard::edge::reply::status_and_code;
use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::scores::{BoardOutcome, Outcome};
use leaderboard_core::service::seal::{self, SealOutcome, SealSettings};
use leaderboard_core::service::{Context, reads};
use leaderboard_core::store::{RankedReads, SealStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::order::{BoardOrder, Direction, RankMode};
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::Period;

use crate::support::{FixedFriends, TestEnv, free_port, lb, player, uncached};

const ALL_PERIODS: [Period; 5] = [
    Period::AllTime,
    Period::Season,
    Period::Monthly,
    Period::Weekly,
    Period::Daily,
];

/// Players of a board in rank order, with their scores, from Redis.
async fn order(
    env: &TestEnv,
    b: &leaderboard_rules::ids::LeaderboardId,
    dir: Direction,
) -> Vec<(String, i64)> {
    let (keys, _) = env
        .ctx
        .index
        .top(BoardOrder::new(b, dir), 100)
        .await
        .unwrap();
    keys.into_iter()
        .map(|k| (k.player, k.score.get()))
        .collect()
}

#[tokio::test]
async fn best_keeps_the_first_time_a_maximum_was_reached() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    env.submit(&b, "p1", "m1", 10).await.unwrap();
    let first30 = env.submit(&b, "p1", "m2", 30).await.unwrap();
    assert!(!env.submit(&b, "p1", "m3", 20).await.unwrap().update_applied);
    let tie = env.submit(&b, "p1", "m4", 30).await.unwrap();
    assert!(!tie.update_applied, "a tie keeps the earlier standing");
    assert_eq!(tie.updated_at, first30.updated_at);
    assert!(env.submit(&b, "p1", "m2", 30).await.unwrap().replayed);
    env.submit(&b, "p2", "m1", 30).await.unwrap();
    // p2 reached 30 later than p1.
    assert_eq!(
        order(&env, &b, Direction::Desc).await,
        [("p1".into(), 30), ("p2".into(), 30)]
    );
    env.assert_index_matches_store(&b).await;
}

#[tokio::test]
async fn min_keeps_the_lowest_and_ranks_ascending() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Min).await;
    for (m, s) in [("m1", 50), ("m2", 40), ("m3", 45), ("m4", 40)] {
        env.submit(&b, "p1", m, s).await.unwrap();
    }
    env.submit(&b, "p2", "m1", 35).await.unwrap();
    env.submit(&b, "p3", "m1", 90).await.unwrap();
    assert_eq!(
        order(&env, &b, Direction::Asc).await,
        [("p2".into(), 35), ("p1".into(), 40), ("p3".into(), 90)]
    );
    let rows = env.standings(&b).await;
    let p1 = rows.iter().find(|r| r.player_id.as_str() == "p1").unwrap();
    assert_eq!(
        (p1.score.get(), p1.version, p1.last_match_id.as_str()),
        (40, 2, "m2")
    );
    env.assert_index_matches_store(&b).await;
}

#[tokio::test]
async fn latest_takes_the_last_accepted_result_and_ignores_retries_of_older_ones() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Latest).await;
    for (m, s) in [("m1", 10), ("m2", 30), ("m3", 20)] {
        env.submit(&b, "p1", m, s).await.unwrap();
    }
    let retry = env.submit(&b, "p1", "m2", 30).await.unwrap();
    assert!(retry.replayed);
    let rows = env.standings(&b).await;
    assert_eq!((rows[0].score.get(), rows[0].version), (20, 3));
    env.assert_index_matches_store(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sum_adds_twenty_five_concurrent_matches_once_each_despite_retries() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Sum).await;
    // Every match posted twice at once, plus a late third copy of every fifth one: 55
    // writers on one row. (Fifty matches, 110 writers, took 73 s on a loaded machine:
    // each write that loses the row's condition tries again.)
    let posts = (1..=25).flat_map(|m| std::iter::repeat_n(m, if m % 5 == 0 { 3 } else { 2 }));
    let replies = join_all(posts.map(|m| {
        let (env, b) = (&env, &b);
        async move { env.submit(b, "p1", &format!("m{m}"), m).await }
    }))
    .await;
    let replies: Vec<_> = replies.into_iter().map(Result::unwrap).collect();
    assert_eq!(replies.iter().filter(|r| !r.replayed).count(), 25);
    let rows = env.standings(&b).await;
    assert_eq!(
        (rows[0].score.get(), rows[0].version),
        ((1..=25).sum::<i64>(), 25)
    );
    env.assert_index_matches_store(&b).await;
}

fn accepted(o: &BoardOutcome) -> (i64, Option<i64>, bool, Option<u64>, Option<u64>) {
    match &o.outcome {
        Outcome::Accepted {
            score,
            previous_score,
            update_applied,
            rank,
            previous_rank,
            ..
        } => (
            score.get(),
            previous_score.map(|s| s.get()),
            *update_applied,
            *rank,
            *previous_rank,
        ),
        Outcome::Refused { refused } => panic!("{} refused: {refused:?}", o.period.as_str()),
    }
}

#[tokio::test]
async fn one_result_updates_every_window_of_both_scopes_and_a_retry_returns_the_same_list() {
    let env = TestEnv::new().await;
    let now = now_ms();
    let fam = env
        .family(
            Policy::Best,
            &ALL_PERIODS,
            Some((now - 3_600_000, now + 86_400_000)),
            300,
        )
        .await;
    env.submit_match(&fam, "NA", "rival", "r1", 500, Some(now))
        .await
        .unwrap();
    env.submit_match(&fam, "EU", "p1", "m0", 100, Some(now))
        .await
        .unwrap();

    let first = env
        .submit_match(&fam, "EU", "p1", "m1", 700, Some(now))
        .await
        .unwrap();
    assert_eq!(first.results.len(), 10, "GLOBAL and EU x 5 periods");
    for o in &first.results {
        let id = o.leaderboard_id.clone().unwrap();
        assert!(id.as_str().starts_with(&format!(
            "{}:ranked:{}:{}",
            fam.0,
            o.scope,
            o.period.as_str()
        )));
        let (score, previous, applied, rank, previous_rank) = accepted(o);
        assert_eq!((score, previous, applied), (700, Some(100), true));
        // The rival only plays NA: p1 passes them on the global boards.
        let expected_ranks = if o.scope == "GLOBAL" {
            (Some(1), Some(2))
        } else {
            (Some(1), Some(1))
        };
        assert_eq!((rank, previous_rank), expected_ranks, "{id}");
        // The board agrees with the reply, in DynamoDB and Redis.
        let rows = env.standings(&id).await;
        let me = rows.iter().find(|r| r.player_id.as_str() == "p1").unwrap();
        assert_eq!(me.score.get(), 700);
        env.assert_index_matches_store(&id).await;
    }

    // One result has one reached-at on every board, so ties break alike everywhere.
    let stamps: std::collections::HashSet<_> = first
        .results
        .iter()
        .map(|o| match &o.outcome {
            Outcome::Accepted { updated_at, .. } => updated_at.clone(),
            Outcome::Refused { .. } => String::new(),
        })
        .collect();
    assert_eq!(stamps.len(), 1, "{stamps:?}");

    let retry = env
        .submit_match(&fam, "EU", "p1", "m1", 700, Some(now))
        .await
        .unwrap();
    let strip = |r: &[BoardOutcome]| -> Vec<_> {
        r.iter()
            .map(|o| (o.leaderboard_id.clone(), accepted(o)))
            .collect()
    };
    assert_eq!(strip(&retry.results), strip(&first.results));
    assert!(
        retry
            .results
            .iter()
            .all(|o| matches!(o.outcome, Outcome::Accepted { replayed: true, .. }))
    );
    for o in &retry.results {
        let rows = env.standings(o.leaderboard_id.as_ref().unwrap()).await;
        let me = rows.iter().find(|r| r.player_id.as_str() == "p1").unwrap();
        assert_eq!(me.version, 2, "the retry wrote nothing");
    }
}

#[tokio::test]
async fn a_result_for_a_closed_window_is_refused_there_and_applied_elsewhere() {
    let env = TestEnv::new().await;
    let fam = env
        .family(Policy::Best, &[Period::AllTime, Period::Daily], None, 60)
        .await;
    let two_days_ago = now_ms() - 2 * 86_400_000;
    let reply = env
        .submit_match(&fam, "NA", "p1", "m1", 10, Some(two_days_ago))
        .await
        .unwrap();
    for o in &reply.results {
        match (o.period, &o.outcome) {
            (
                Period::AllTime,
                Outcome::Accepted {
                    update_applied: true,
                    ..
                },
            ) => {}
            (Period::Daily, Outcome::Refused { refused }) => {
                assert_eq!(refused.code, "window_closed")
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    // A result in the future beyond the allowed skew is refused as a whole.
    let err = env
        .submit_match(&fam, "NA", "p1", "m2", 10, Some(now_ms() + 3_600_000))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ServiceError::Domain(leaderboard_rules::error::DomainError::EventInFuture { .. })
        ),
        "{err:?}"
    );
    // A region the family does not declare: the family's settings refuse it (a 422).
    let err = env
        .submit_match(&fam, "APAC", "p1", "m3", 10, None)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ServiceError::UnknownRegion { region, .. } if region == "APAC"),
        "{err:?}"
    );
}

#[tokio::test]
async fn results_outside_the_season_are_refused_for_the_season_board_only() {
    let env = TestEnv::new().await;
    let now = now_ms();
    let fam = env
        .family(
            Policy::Best,
            &[Period::AllTime, Period::Season],
            Some((now + 86_400_000, now + 2 * 86_400_000)),
            0,
        )
        .await;
    let reply = env
        .submit_match(&fam, "NA", "p1", "m1", 10, None)
        .await
        .unwrap();
    let season = reply
        .results
        .iter()
        .find(|o| o.period == Period::Season && o.scope == "GLOBAL")
        .unwrap();
    assert!(season.leaderboard_id.is_none());
    assert!(
        matches!(&season.outcome, Outcome::Refused { refused } if refused.code == "outside_season")
    );
    assert_eq!(
        reply
            .results
            .iter()
            .filter(|o| matches!(o.outcome, Outcome::Accepted { .. }))
            .count(),
        2
    );
}

/// p1..p4 post match m1 at 100..103 in region NA, all at one match time, which is
/// returned (a retry sends it again).
async fn four_players(env: &TestEnv, fam: &(String, String)) -> i64 {
    let played = now_ms();
    for (i, p) in ["p1", "p2", "p3", "p4"].iter().enumerate() {
        env.submit_match(fam, "NA", p, "m1", 100 + i as i64, Some(played))
            .await
            .unwrap();
    }
    played
}

#[tokio::test]
async fn a_closed_window_stays_readable_from_dynamodb_after_its_redis_keys_expire() {
    let mut env = TestEnv::new().await;
    // Keys of closed windows expire at once in this test.
    env.ctx.settings.redis_retention = Duration::ZERO;
    let now = now_ms();
    // Long enough for the writes below even on a loaded machine (5 s was not, beside
    // two other tests).
    let end = now + 12_000;
    let fam = env
        .family(
            Policy::Best,
            &[Period::Season],
            Some((now - 60_000, end)),
            0,
        )
        .await;
    // Game servers send the match's own time, and send it again on a retry.
    let played = four_players(&env, &fam).await;
    let id = lb(&format!("{}:ranked:GLOBAL:SEASON:s1", fam.0));
    let (_, total) = env
        .ctx
        .index
        .top(BoardOrder::new(&id, Direction::Desc), 10)
        .await
        .unwrap();
    assert_eq!(total, 4);

    // Past the end (no grace) plus a second for EXPIREAT's whole-second resolution.
    let wait = (end - now_ms()).max(0) as u64 + 1_200;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let expired = env
        .ctx
        .index
        .top(BoardOrder::new(&id, Direction::Desc), 10)
        .await;
    assert!(
        matches!(
            expired,
            Err(leaderboard_core::store::IndexError::NotReady(
                leaderboard_core::store::Health::Missing
            ))
        ),
        "the closed window's keys and marker expired from Redis: {expired:?}"
    );

    let top = reads::top(&env.ctx, &id, 3, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(top.meta.source).unwrap(), "dynamodb");
    assert!(!top.meta.degraded, "history is not a degradation");
    assert_eq!(top.total, 4);
    let players: Vec<_> = top.entries.iter().map(|e| e.player_id.as_str()).collect();
    assert_eq!(players, ["p4", "p3", "p2"]);

    let (who, p2) = (Caller::default(), player("p2"));
    let rank = reads::rank(&env.ctx, &who, &id, &p2, 1, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(rank.meta.source).unwrap(), "dynamodb");
    assert_eq!(
        (rank.global_rank, rank.total, rank.score.get()),
        (3, 4, 101)
    );
    let around: Vec<_> = rank
        .neighbors
        .iter()
        .map(|e| (e.rank, e.player_id.as_str()))
        .collect();
    assert_eq!(around, [(2, "p3"), (3, "p2"), (4, "p1")]);

    // Friends too (the friend list itself comes from a fixed source here; the HTTP
    // social graph has its own tests).
    let friends = FixedFriends(vec![player("p1"), player("p4"), player("ghost")]);
    let f = reads::friends_rank(&env.ctx, &friends, &who, &id, &p2, 5, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(f.meta.source).unwrap(), "dynamodb");
    assert_eq!((f.friends_rank, f.friends_total), (Some(2), 3));

    // Writes are refused now, but a retry of an accepted result still gets its receipt.
    let late = env
        .submit_match(&fam, "NA", "p5", "m1", 999, Some(played))
        .await
        .unwrap();
    assert!(late.results.iter().all(
        |o| matches!(&o.outcome, Outcome::Refused { refused } if refused.code == "window_closed")
    ));
    let retry = env
        .submit_match(&fam, "NA", "p1", "m1", 100, Some(played))
        .await
        .unwrap();
    assert!(
        retry
            .results
            .iter()
            .all(|o| matches!(o.outcome, Outcome::Accepted { replayed: true, .. }))
    );
}

/// A family's boards that keep no rank order in DynamoDB (the SEASON boards here; a
/// family's DAILY ones by default): their rows carry no `by_rank` key, a read Redis
/// cannot answer is a 503 `rank_unavailable` where the other boards answer exactly from
/// DynamoDB, a closed window read past Redis's retention is a 410 `window_expired`, and
/// its seal still ranks every player right, from the rows sorted.
#[tokio::test]
async fn a_window_without_a_rank_order_in_dynamodb_says_so_when_redis_cannot_answer_and_seals_right()
 {
    let mut env = TestEnv::new().await;
    env.ctx.settings.redis_retention = Duration::ZERO;
    let now = now_ms();
    // Long enough for the writes and reads below on a loaded machine (5 s was not).
    let end = now + 12_000;
    let ranked = Some(vec![Period::AllTime]);
    let fam = env
        .family_ranking(
            Policy::Best,
            &[Period::AllTime, Period::Season],
            Some((now - 60_000, end)),
            0,
            ranked,
        )
        .await;
    four_players(&env, &fam).await;
    let season = lb(&format!("{}:ranked:GLOBAL:SEASON:s1", fam.0));
    let all_time = lb(&format!("{}:ranked:GLOBAL:ALL_TIME", fam.0));
    let in_order = |id| {
        env.ctx
            .store
            .ranked_after(BoardOrder::new(id, Direction::Desc), None, 10)
    };
    assert_eq!(in_order(&all_time).await.unwrap().len(), 4);
    assert!(
        in_order(&season).await.unwrap().is_empty(),
        "the season's rows carry no by_rank key"
    );
    let board = env.ctx.boards.get(&env.ctx.store, &season).await.unwrap();
    assert!(!board.rank_index);

    // Redis away: the all-time board answers from DynamoDB, the season board says it
    // cannot (and has no last known answer in this context to give instead).
    let down = Context::new(
        env.ctx.store.clone(),
        RedisRankIndex::new(
            &format!("redis://127.0.0.1:{}", free_port()),
            &env.prefix,
            Duration::from_millis(50),
        )
        .unwrap(),
        uncached(),
    );
    let exact = reads::top(&down, &all_time, 3, RankMode::Unique)
        .await
        .unwrap();
    assert!(exact.meta.degraded);
    assert_eq!(
        (exact.total, exact.entries[0].player_id.as_str()),
        (4, "p4")
    );
    for err in [
        reads::top(&down, &season, 3, RankMode::Unique)
            .await
            .unwrap_err(),
        reads::rank(
            &down,
            &Caller::default(),
            &season,
            &player("p2"),
            1,
            RankMode::Unique,
        )
        .await
        .unwrap_err(),
    ] {
        assert_eq!(status_and_code(&err), (503, "rank_unavailable"), "{err:?}");
    }
    // While Redis answers, the season board reads as any other.
    let live = reads::top(&env.ctx, &season, 3, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(serde_json::to_value(live.meta.source).unwrap(), "redis");
    assert_eq!(live.total, 4);

    // Closed, and its keys gone with the retention: it points to its results.
    let wait = (end - now_ms()).max(0) as u64 + 1_200;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let gone = reads::top(&env.ctx, &season, 3, RankMode::Unique)
        .await
        .unwrap_err();
    assert_eq!(status_and_code(&gone), (410, "window_expired"), "{gone:?}");
    assert!(gone.to_string().contains("/results"), "{gone}");
    let kept = reads::top(&env.ctx, &all_time, 3, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(kept.total, 4, "the all-time board is untouched");

    let settled = SealSettings {
        settle: Duration::ZERO,
    };
    let events = MemoryEvents::default();
    let far = Instant::now() + Duration::from_secs(60);
    let report = seal::seal(&env.ctx.store, &events, settled, &season, far)
        .await
        .unwrap();
    assert_eq!(report.boards[0].outcome, SealOutcome::Sealed);
    let results = env.ctx.store.get_results(&season).await.unwrap().unwrap();
    let placed: Vec<_> = results
        .top
        .iter()
        .map(|p| (p.rank, p.player_id.as_ref().unwrap().as_str()))
        .collect();
    assert_eq!(placed, [(1, "p4"), (2, "p3"), (3, "p2"), (4, "p1")]);
}
