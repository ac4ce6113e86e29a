//! Exactly-once ingest: retries, concurrent duplicates, concurrent improving writes,
//! refused writes, and writes while Redis is down.

use std::time::Duration;

use aws_sdk_dynamodb::types::AttributeValue;
use futures::future::join_all;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::write::reply::IngestReply;
use leaderboard_core::service::{Context, Settings};
use leaderboard_rules::board::Policy;

use crate::support::TestEnv;
use leaderboard_rules::decimal::Shown;

/// The parts of a reply that make up the receipt.
fn receipt(r: &IngestReply) -> (i64, Option<i64>, bool, String, String) {
    (
        r.score.get(),
        r.previous_score.map(Shown::get),
        r.update_applied,
        r.updated_at.clone(),
        r.last_match_id.to_string(),
    )
}

#[tokio::test]
async fn when_match_id_is_replayed_sequentially_one_update_applies_and_receipts_match() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    env.submit(&b, "p1", "m0", 10).await.unwrap();
    let mut replies = Vec::new();
    for _ in 0..20 {
        replies.push(env.submit(&b, "p1", "m1", 50).await.unwrap());
    }
    let first = &replies[0];
    assert!(!first.replayed && first.update_applied);
    assert_eq!(
        (first.score.get(), first.previous_score.map(Shown::get)),
        (50, Some(10))
    );
    for r in &replies[1..] {
        assert!(r.replayed);
        assert_eq!(receipt(r), receipt(first));
        assert_eq!(r.rank, Some(1));
    }
    let rows = env.standings(&b).await;
    assert_eq!(rows.len(), 1);
    assert_eq!((rows[0].score.get(), rows[0].version), (50, 2));
    env.assert_index_matches_store(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_match_id_is_posted_concurrently_exactly_one_request_applies_it() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    let replies: Vec<IngestReply> = join_all((0..20).map(|_| env.submit(&b, "p1", "m1", 42)))
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let originals: Vec<_> = replies.iter().filter(|r| !r.replayed).collect();
    assert_eq!(originals.len(), 1, "exactly one request is the original");
    for r in &replies {
        assert_eq!(receipt(r), receipt(originals[0]));
    }
    assert!(originals[0].update_applied);
    let rows = env.standings(&b).await;
    assert_eq!((rows[0].score.get(), rows[0].version), (42, 1));
    env.assert_index_matches_store(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_improving_writes_end_at_the_maximum_with_one_reply_applying_it() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    // 25 results of one player on one board at once. Every write of the row (a receipt
    // too) moves its revision, so they serialize: each lost race reads again. At 100 at
    // once on this 2-core machine's local endpoint some gave up after 64 attempts with
    // 503 `contention` (retryable), see docs/cost.md.
    let replies: Vec<IngestReply> = join_all((1..=25).map(|i| {
        let (env, b) = (&env, &b);
        async move { env.submit(b, "p1", &format!("m{i}"), i).await }
    }))
    .await
    .into_iter()
    .map(Result::unwrap)
    .collect();
    let winners: Vec<_> = replies
        .iter()
        .filter(|r| r.update_applied && r.score.get() == 25)
        .collect();
    assert_eq!(winners.len(), 1, "exactly one reply applies the maximum");
    assert_eq!(winners[0].last_match_id.as_str(), "m25");
    // Every applied reply moved the score up, so versions equal the applied count.
    let applied = replies.iter().filter(|r| r.update_applied).count() as u64;
    let rows = env.standings(&b).await;
    assert_eq!((rows[0].score.get(), rows[0].version), (25, applied));
    env.assert_index_matches_store(&b).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sum_board_counts_each_match_once_under_concurrent_retries() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Sum).await;
    let posts = (1..=10).flat_map(|m| (0..4).map(move |_| m));
    let replies = join_all(posts.map(|m| {
        let (env, b) = (&env, &b);
        async move { env.submit(b, "p1", &format!("m{m}"), m).await }
    }))
    .await;
    assert!(replies.iter().all(Result::is_ok));
    let rows = env.standings(&b).await;
    assert_eq!(rows[0].score.get(), (1..=10).sum::<i64>());
    assert_eq!(rows[0].version, 10);
    env.assert_index_matches_store(&b).await;
}

#[tokio::test]
async fn reusing_a_match_id_with_another_score_is_a_conflict_and_changes_nothing() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    env.submit(&b, "p1", "m1", 5).await.unwrap();
    let err = env.submit(&b, "p1", "m1", 500).await.unwrap_err();
    assert!(
        matches!(err, ServiceError::IdempotencyConflict(_)),
        "{err:?}"
    );
    let rows = env.standings(&b).await;
    assert_eq!((rows[0].score.get(), rows[0].version), (5, 1));
}

#[tokio::test]
async fn writes_to_unknown_or_frozen_boards_are_refused() {
    let env = TestEnv::new().await;
    let missing = crate::support::lb("no-such-board");
    let err = env.submit(&missing, "p1", "m1", 5).await.unwrap_err();
    assert!(matches!(err, ServiceError::BoardNotFound(_)), "{err:?}");

    let b = env.board(Policy::Best).await;
    // A warm container that caches board definitions for 200 ms has seen it ACTIVE.
    let warm = context(&env, Duration::from_millis(200));
    submit(&warm, &b, "m1", 5).await.unwrap();
    // An operator freezes the board (written straight to DynamoDB here).
    env.ctx
        .store
        .client()
        .update_item()
        .table_name(env.ctx.store.table())
        .key("pk", AttributeValue::S(format!("B#{b}")))
        .key("sk", AttributeValue::S("BOARD".into()))
        .update_expression("SET #s = :f")
        .expression_attribute_names("#s", "status")
        .expression_attribute_values(":f", AttributeValue::S("FROZEN".into()))
        .send()
        .await
        .unwrap();
    let frozen = |err: &ServiceError| matches!(err, ServiceError::BoardNotActive { status, .. } if status.as_str() == "FROZEN");
    // A container that had not cached the board refuses at once ...
    let err = submit(&context(&env, Duration::from_millis(200)), &b, "m2", 50)
        .await
        .unwrap_err();
    assert!(frozen(&err), "{err:?}");
    // ... and the warm one as soon as its cached definition expires.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let err = submit(&warm, &b, "m3", 60).await.unwrap_err();
    assert!(frozen(&err), "{err:?}");
    let rows = env.standings(&b).await;
    assert_eq!((rows[0].score.get(), rows[0].version), (5, 1));
}

/// A second container's view: same table and keys, its own board cache.
fn context(env: &TestEnv, board_ttl: Duration) -> leaderboard::wiring::AppContext {
    Context::new(
        env.ctx.store.clone(),
        RedisRankIndex::new(
            &crate::support::redis_url(),
            &env.prefix,
            Duration::from_secs(2),
        )
        .unwrap(),
        Settings {
            board_cache_ttl: board_ttl,
            ..Settings::default()
        },
    )
}

async fn submit(
    ctx: &leaderboard::wiring::AppContext,
    b: &leaderboard_rules::ids::LeaderboardId,
    m: &str,
    s: i64,
) -> Result<IngestReply, ServiceError> {
    let m = leaderboard_rules::ids::MatchId::parse(m).unwrap();
    let p1 = crate::support::player("p1");
    let req = leaderboard_core::service::write::request::SubmitScore::plain(
        b.clone(),
        p1,
        m,
        crate::support::amount(s),
    );
    leaderboard_core::service::ingest::submit_score(ctx, req).await
}

#[tokio::test]
async fn a_write_commits_when_redis_is_down_and_answers_rank_null() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    let dead = crate::support::free_port();
    let down = Context::new(
        env.ctx.store.clone(),
        RedisRankIndex::new(
            &format!("redis://127.0.0.1:{dead}"),
            &env.prefix,
            Duration::from_millis(50),
        )
        .unwrap(),
        Settings::default(),
    );
    let reply = submit(&down, &b, "m1", 77).await.unwrap();
    assert!(reply.update_applied);
    assert_eq!(reply.rank, None);
    let rows = env.standings(&b).await;
    assert_eq!(rows[0].score.get(), 77);
    // The write-through never happened: the live index has nothing yet.
    let (members, _) = env.index_snapshot(&b).await;
    assert!(members.is_empty());
}

/// A row and receipt as the transactional protocol wrote them (the row without `rev`,
/// the receipt an item of its own): the old match still replays, a new one applies once
/// over the old row, and the old one replays after that too.
#[tokio::test]
async fn rows_and_receipts_from_before_rows_kept_receipts_still_answer_and_count_once() {
    use leaderboard::adapters::dynamodb::StandingItem;
    use leaderboard_core::store::StandingStore;
    use leaderboard_rules::board::Standing;
    use leaderboard_rules::ids::{MatchId, PlayerId};
    use leaderboard_rules::order::Direction;
    use leaderboard_rules::score::Score;

    let env = TestEnv::new().await;
    let lb = env.board(Policy::Sum).await;
    let now = leaderboard_rules::time::now_ms();
    let ana = PlayerId::parse("ana").unwrap();
    let standing = Standing {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        metadata: None,
        score: Score::new("score", 10).unwrap(),
        reached_at: now,
        version: 1,
        last_match_id: MatchId::parse("old").unwrap(),
    };
    let row = StandingItem::new(&lb, &ana, Direction::Desc, &standing, None);
    let n = |v: i64| AttributeValue::N(v.to_string());
    let s = |v: &str| AttributeValue::S(v.to_owned());
    let store = &env.ctx.store;
    let put = |item| {
        store
            .client()
            .put_item()
            .table_name(store.table())
            .set_item(Some(item))
            .send()
    };
    put(serde_dynamo::to_item(row).unwrap()).await.unwrap();
    let receipt = std::collections::HashMap::from([
        ("pk".to_owned(), s(&format!("R#{lb}#ana"))),
        ("sk".to_owned(), s("M#old")),
        ("kind".to_owned(), s("receipt")),
        ("submitted".to_owned(), n(10)),
        ("score".to_owned(), n(10)),
        ("update_applied".to_owned(), AttributeValue::Bool(true)),
        ("updated_at".to_owned(), n(now)),
        ("last_match_id".to_owned(), s("old")),
        ("expires_at".to_owned(), n(now / 1000 + 86_400)),
    ]);
    put(receipt).await.unwrap();

    let old = env.submit(&lb, "ana", "old", 10).await.unwrap();
    assert_eq!(
        (old.replayed, old.score.get(), old.previous_score),
        (true, 10, None)
    );
    let new = env.submit(&lb, "ana", "new", 5).await.unwrap();
    assert_eq!(
        (
            new.replayed,
            new.score.get(),
            new.previous_score.map(Shown::get)
        ),
        (false, 15, Some(10))
    );
    for (m, value, score) in [("old", 10, 10), ("new", 5, 15)] {
        let again = env.submit(&lb, "ana", m, value).await.unwrap();
        assert_eq!((again.replayed, again.score.get()), (true, score), "{m}");
    }
    let total = store.get_standing(&lb, &ana).await.unwrap().unwrap();
    assert_eq!((total.score.get(), total.version), (15, 2));
}
