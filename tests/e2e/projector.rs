//! The stream projector against the table's real stream: redelivery, old batches, a
//! wiped index (these on a single node and on a Redis Cluster), races with the
//! write-through, poison records and a dead Redis.

use leaderboard_core::store::IndexWrites;
use std::time::Duration;

use futures::future::join_all;
use leaderboard::adapters::dynamodb::StandingItem;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard_core::service::projector::project;
use leaderboard_core::service::repair::Reporter;
use leaderboard_rules::board::Policy;

use crate::on_both_topologies;
use crate::support::{Rng, TestEnv, batch, free_port};

/// 5 players x 3 improving writes each, through ingest (write-through on).
async fn scripted_board(env: &TestEnv) -> leaderboard_rules::ids::LeaderboardId {
    let b = env.board(Policy::Best).await;
    for round in 1..=3 {
        for p in 0..5 {
            let value = round * 100 + p * 7;
            env.submit(&b, &format!("p{p}"), &format!("m{round}"), value)
                .await
                .unwrap();
        }
    }
    b
}

on_both_topologies!(
    replaying_a_batch_twice_or_an_old_batch_leaves_redis_unchanged,
    a_wiped_index_gets_its_entries_back_from_the_stream_alone
);

async fn replaying_a_batch_twice_or_an_old_batch_leaves_redis_unchanged(url: &str) {
    let env = TestEnv::on(url).await;
    let b = scripted_board(&env).await;
    let before = env.index_snapshot(&b).await;
    let records = env.stream_records().await;
    assert!(
        records.len() >= 15,
        "the stream holds every write ({} records)",
        records.len()
    );

    for _ in 0..2 {
        let (retry, stats) =
            project(&env.ctx.index, &Reporter::default(), batch(records.clone())).await;
        assert!(retry.is_empty());
        assert_eq!(stats.applied, 0, "nothing newer than the write-through");
        assert_eq!(env.index_snapshot(&b).await, before);
    }
    let old = records[..records.len() / 3].to_vec();
    let (_, stats) = project(&env.ctx.index, &Reporter::default(), batch(old)).await;
    assert_eq!(stats.applied, 0);
    assert_eq!(env.index_snapshot(&b).await, before);
    assert_eq!(env.assert_index_matches_store(&b).await, 5);
}

async fn a_wiped_index_gets_its_entries_back_from_the_stream_alone(url: &str) {
    let env = TestEnv::on(url).await;
    let b = scripted_board(&env).await;
    env.wipe_index(&b).await;
    let records = env.stream_records().await;
    let (retry, stats) =
        project(&env.ctx.index, &Reporter::default(), batch(records.clone())).await;
    assert!(retry.is_empty());
    assert!(stats.applied >= 5);
    assert_eq!(env.assert_index_matches_store(&b).await, 5);
    // Delivered in reverse order, the same stream still converges.
    env.wipe_index(&b).await;
    let mut reversed = records;
    reversed.reverse();
    project(&env.ctx.index, &Reporter::default(), batch(reversed)).await;
    assert_eq!(env.assert_index_matches_store(&b).await, 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn write_through_and_projector_racing_converge_to_dynamodb() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Latest).await;
    for round in 1..=4 {
        for p in 0..20 {
            env.submit(
                &b,
                &format!("p{p}"),
                &format!("m{round}"),
                (p * 13 + round * 31) % 50,
            )
            .await
            .unwrap();
        }
    }
    let records = env.stream_records().await;
    let entries: Vec<_> = records
        .iter()
        .filter_map(|r| serde_dynamo::from_item::<_, StandingItem>(r.change.new_image.clone()).ok())
        .map(|s| s.index_entry())
        .collect();
    let versions: std::collections::BTreeSet<_> = entries
        .iter()
        .map(|e| (e.key.player.clone(), e.version))
        .collect();
    assert_eq!(versions.len(), 80, "one standing version per applied write");
    env.wipe_index(&b).await;

    let mut rng = Rng::new(0x5eed);
    // Write-through applies of every version, one by one, in a shuffled order ...
    let mut shuffled = entries.clone();
    rng.shuffle(&mut shuffled);
    let mut tasks = Vec::new();
    for chunk in shuffled.chunks(10) {
        let index = &env.ctx.index;
        tasks.push(Box::pin(async move {
            for e in chunk {
                index.apply(e).await.unwrap();
            }
        })
            as std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>);
    }
    // ... racing projector batches: random slices, each delivered up to three times.
    for _ in 0..12 {
        let start = rng.below(records.len() as u64) as usize;
        let len = 1 + rng.below(40) as usize;
        let slice = records[start..(start + len).min(records.len())].to_vec();
        let index = &env.ctx.index;
        tasks.push(Box::pin(async move {
            for _ in 0..3 {
                let (retry, _) = project(index, &Reporter::default(), batch(slice.clone())).await;
                assert!(retry.is_empty());
            }
        }));
    }
    join_all(tasks).await;
    // Whatever interleaving happened, the newest version of every player won.
    assert_eq!(env.assert_index_matches_store(&b).await, 20);
}

#[tokio::test]
async fn poison_records_are_skipped_and_do_not_block_the_batch() {
    let env = TestEnv::new().await;
    let b = scripted_board(&env).await;
    env.wipe_index(&b).await;
    let mut records = env.stream_records().await;
    let mut poison = records[0].clone();
    poison.event_name = "INSERT".into();
    poison.change.sequence_number = Some("poison-1".into());
    poison.change.new_image =
        serde_dynamo::to_item(serde_json::json!({"kind": "standing", "score": "not a number"}))
            .unwrap();
    records.insert(3, poison);
    let (retry, stats) = project(&env.ctx.index, &Reporter::default(), batch(records)).await;
    assert!(retry.is_empty(), "poison never blocks the shard");
    assert_eq!(stats.poison, 1);
    assert_eq!(env.assert_index_matches_store(&b).await, 5);
}

#[tokio::test]
async fn when_redis_is_down_every_standing_record_is_reported_for_retry() {
    let env = TestEnv::new().await;
    let _b = scripted_board(&env).await;
    let records = env.stream_records().await;
    let dead = RedisRankIndex::new(
        &format!("redis://127.0.0.1:{}", free_port()),
        &env.prefix,
        Duration::from_millis(50),
    )
    .unwrap();
    let (retry, stats) = project(&dead, &Reporter::default(), batch(records.clone())).await;
    let standing_seqs: Vec<_> = records
        .iter()
        .filter(|r| {
            serde_dynamo::from_item::<_, StandingItem>(r.change.new_image.clone()).is_ok()
                && matches!(r.event_name.as_str(), "INSERT" | "MODIFY")
        })
        .map(|r| r.change.sequence_number.clone())
        .collect();
    let reported = retry;
    assert!(!reported.is_empty());
    assert_eq!(reported, standing_seqs);
    assert_eq!(stats.failed, standing_seqs.len());
}
