//! The repair handler over the in-memory twins: each route answered as the runtime calls it.

use aws_lambda_events::event::sqs::SqsMessage;
use lambda_runtime::Context as Invocation;
use leaderboard::edge::testing;
use leaderboard_core::memory::{self, MemoryPlane, MemoryStore};
use leaderboard_core::store::Health;
use leaderboard_core::store::IndexUpkeep;
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;

use super::*;

/// A batch of the repair queue: (message id, body) each, as Lambda sends it.
fn batch(messages: &[(&str, &str)]) -> Value {
    let mut event = SqsEvent::default();
    event.records = messages
        .iter()
        .map(|(id, body)| {
            let mut m = SqsMessage::default();
            m.message_id = Some((*id).into());
            m.body = Some((*body).into());
            m
        })
        .collect();
    serde_json::to_value(event).unwrap()
}

fn kept(resp: &Value) -> Vec<&str> {
    resp["batchItemFailures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["itemIdentifier"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn rebuilds_a_reported_board_marks_all_stale_for_a_lost_range_and_keeps_garbage() {
    let deps = Deps {
        ctx: memory::context(),
        stream: MemoryStore::default(),
        plane: None::<MemoryPlane>,
    };
    let lb = memory::seed(&deps.ctx, "h:repair", Policy::Best, &[("a", 1)]).await;
    deps.ctx.index.wipe(&lb);
    let event = batch(&[
        ("m1", r#"{"rebuild": "h:repair", "health": "missing"}"#),
        ("m2", "not a repair message"),
    ]);
    let resp = handle(&deps, testing::event(event)).await.unwrap();
    assert_eq!(kept(&resp), ["m2"]);
    let index = &deps.ctx.index;
    let boards = std::slice::from_ref(&lb);
    assert_eq!(index.health(boards).await.unwrap(), [Health::Ready]);
    // A range the stream no longer has: every board is marked stale.
    deps.stream.trim_stream(10);
    let lost = r#"{"DDBStreamBatchInfo": {"shardId": "s", "startSequenceNumber": "1",
        "endSequenceNumber": "5", "streamArn": "arn"}}"#;
    let resp = handle(&deps, testing::event(batch(&[("m3", lost)])))
        .await
        .unwrap();
    assert!(kept(&resp).is_empty());
    assert_eq!(index.health(boards).await.unwrap(), [Health::Stale]);
}

/// An ElastiCache notification as SNS hands it to Lambda.
fn notification(message: &str) -> Value {
    serde_json::json!({"Records": [{
        "EventSource": "aws:sns",
        "EventVersion": "1.0",
        "EventSubscriptionArn": "arn:aws:sns:us-east-1:000000000000:rank-events:1",
        "Sns": {
            "Type": "Notification",
            "MessageId": "n1",
            "TopicArn": "arn:aws:sns:us-east-1:000000000000:rank-events",
            "Subject": null,
            "Message": message,
            "Timestamp": "2026-11-27T10:00:00.000Z",
            "SignatureVersion": "1",
            "Signature": "c2ln",
            "SigningCertUrl": "https://sns.us-east-1.amazonaws.com/cert.pem",
            "UnsubscribeUrl": "https://sns.us-east-1.amazonaws.com/unsub",
            "MessageAttributes": {}
        }
    }]})
}

#[tokio::test]
async fn a_failover_marks_the_boards_of_its_shard_stale_and_no_other() {
    let plane = MemoryPlane::even("lb-rank", 3);
    let group = plane.0.clone().unwrap();
    let deps = Deps {
        ctx: memory::context(),
        stream: MemoryStore::default(),
        plane: Some(plane),
    };
    // Boards until two shards hold some: the failover is on the first board's shard.
    let mut boards = Vec::new();
    for i in 0..12 {
        boards.push(memory::seed(&deps.ctx, &format!("h:fo{i}"), Policy::Best, &[("a", 1)]).await);
    }
    let shard_of = |lb: &LeaderboardId| {
        group
            .group_of(lb.cluster_slot())
            .unwrap()
            .node_group_id
            .clone()
    };
    let hit = shard_of(&boards[0]);
    assert!(
        boards.iter().any(|lb| shard_of(lb) != hit),
        "every board on one shard"
    );
    let inv = Invocation::default();
    // A notification that loses nothing changes nothing.
    let calm = notification(r#"{"ElastiCache:SnapshotComplete":"lb-rank-0001-001"}"#);
    handle(&deps, LambdaEvent::new(calm, inv.clone()))
        .await
        .unwrap();
    let health = deps.ctx.index.health(&boards).await.unwrap();
    assert!(health.iter().all(|h| *h == Health::Ready), "{health:?}");
    let failover = notification(&format!(
        r#"{{"ElastiCache:FailoverComplete":"lb-rank-{hit}-002"}}"#
    ));
    handle(&deps, LambdaEvent::new(failover, inv.clone()))
        .await
        .unwrap();
    let health = deps.ctx.index.health(&boards).await.unwrap();
    for (lb, h) in boards.iter().zip(&health) {
        let want = if shard_of(lb) == hit {
            Health::Stale
        } else {
            Health::Ready
        };
        assert_eq!(*h, want, "{lb} on shard {}", shard_of(lb));
    }
    // A node id of another shape (cluster mode off): every board.
    let reboot = notification("ElastiCache:CacheNodesRebooted : lb-rank-001");
    handle(&deps, LambdaEvent::new(reboot, inv)).await.unwrap();
    let health = deps.ctx.index.health(&boards).await.unwrap();
    assert!(health.iter().all(|h| *h == Health::Stale), "{health:?}");
}
