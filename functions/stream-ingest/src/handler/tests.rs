//! The stream-ingest handler over the in-memory twins: each route answered as the runtime calls it.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use leaderboard::edge::testing;
use leaderboard_core::memory::{self, MemoryDeadLetters};
use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::mappings::put_mapping;
use leaderboard_core::store::StandingStore;
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::window::Period;
use serde_json::json;

use super::*;

fn kafka(records: &[(i64, &str, &str)]) -> Value {
    let records: Vec<Value> = records
        .iter()
        .map(|(offset, key, value)| {
            json!({"topic": "pod-1", "partition": 0, "offset": offset, "timestamp": 1,
                "timestampType": "CREATE_TIME", "key": STANDARD.encode(key),
                "value": STANDARD.encode(value), "headers": []})
        })
        .collect();
    json!({"eventSource": "aws:kafka", "records": {"pod-1-0": records}})
}

#[tokio::test]
async fn applies_dead_letters_and_retries_the_whole_batch_when_letters_cannot_be_kept() {
    let deps = Deps {
        ctx: memory::context(),
        dead_letters: MemoryDeadLetters::default(),
    };
    let mut family = CreateFamily::new("k", "m", Policy::Sum, &["NA"], &[Period::AllTime]);
    family.grace_seconds = 0;
    boards::create_family(&deps.ctx.store, family)
        .await
        .unwrap();
    let body = json!({"fields": {"player_id": "/p", "match_id": "/m", "score": "/s",
        "game": {"const": "k"}, "mode": {"const": "m"}, "region": {"const": "NA"}}});
    put_mapping(&deps.ctx.store, "pod-1", body).await.unwrap();
    let event = kafka(&[
        (5, "ann", r#"{"p": "ann", "m": 1, "s": 3}"#),
        (6, "bob", "{oops"),
    ]);
    let call = || handle(&deps, testing::event(event.clone()));

    deps.dead_letters.set_down(true);
    let err = call().await.unwrap_err();
    assert_eq!(err.error_type(), "DeadLettersUnavailable");
    deps.dead_letters.set_down(false);
    assert_eq!(call().await.unwrap(), json!({"batchItemFailures": []}));
    let sent = deps.dead_letters.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!((sent[0].position.as_str(), sent[0].code), ("6", "not_json"));
    assert_eq!(sent[0].mapping_version, Some(1));
    // Applied once although the batch was delivered twice.
    let lb = LeaderboardId::parse("k:m:GLOBAL:ALL_TIME").unwrap();
    let ann = PlayerId::parse("ann").unwrap();
    let standing = deps.ctx.store.get_standing(&lb, &ann).await.unwrap();
    assert_eq!(standing.map(|s| s.score.get()), Some(3));

    // Not a stream event at all: the invocation fails, nothing is sent.
    let bad = handle(&deps, testing::event(json!({"x": 1})));
    assert_eq!(bad.await.unwrap_err().error_type(), "InvalidPayload");
    assert_eq!(deps.dead_letters.sent.lock().unwrap().len(), 1);
}
