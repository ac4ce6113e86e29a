//! Match results from stream records: three pods in two schemas, redeliveries and
//! poison events; every good event counted once (a SUM board's totals prove it), every
//! poison event dead-lettered with its reason, and a backend fault retried, not lost.

use std::collections::BTreeMap;

use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::stream_ingest::{StreamRecord, ingest_batch};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::mapping::Mapping;
use leaderboard_rules::window::Period;
use serde_json::{Value, json};

use crate::fixtures::{Ctx, ctx, standing};

fn mapping(raw: Value) -> Mapping {
    serde_json::from_value::<Mapping>(raw)
        .unwrap()
        .validated()
        .unwrap()
}

/// Pods 1 and 2 send flat events; pod 3 nests them and counts in tenths.
fn mappings() -> BTreeMap<String, Mapping> {
    let flat = |source: &str| {
        mapping(
            json!({"source": source, "fields": {"player_id": "/player", "match_id": "/match",
            "score": "/points", "game": "/game", "mode": {"const": "ranked"}, "region": "/region"}}),
        )
    };
    let nested = mapping(json!({"source": "pod-3", "fields": {"player_id": "/who/id",
        "match_id": "/id", "score": "/result/tenths", "game": {"const": "g1"},
        "mode": {"const": "ranked"}, "region": "/who/dc", "event_ts": "/at"},
        "score_scale": {"divide": 10}, "timestamp": "epoch_millis"}));
    BTreeMap::from([
        ("pod-1".into(), flat("pod-1")),
        ("pod-2".into(), flat("pod-2")),
        ("pod-3".into(), nested),
    ])
}

fn record(source: &str, position: usize, player: &str, event: &Value) -> StreamRecord {
    StreamRecord {
        partition: format!("{source}-0"),
        position: format!("{source}/{position}"),
        source: source.into(),
        key: player.into(),
        payload: event.to_string().into_bytes(),
    }
}

async fn family(ctx: &Ctx) {
    let mut req = CreateFamily::new(
        "g1",
        "ranked",
        Policy::Sum,
        &["NA", "EU"],
        &[Period::AllTime],
    );
    req.grace_seconds = 0;
    req.dense_ranks = true;
    boards::create_family(&ctx.store, req).await.unwrap();
}

#[tokio::test]
async fn good_events_count_once_poison_is_dead_lettered_and_faults_are_retried() {
    let ctx = ctx();
    family(&ctx).await;
    let maps = mappings();
    let players = ["ann", "bob", "cid", "dee"];
    let mut records = Vec::new();
    let mut totals: BTreeMap<&str, i64> = BTreeMap::new();
    for i in 0..60_usize {
        let p = players[i % 4];
        let points = (i as i64 % 9) + 1;
        *totals.entry(p).or_default() += points;
        let (source, event) = match i % 3 {
            0 => (
                "pod-1",
                json!({"player": p, "match": i, "points": points, "game": "g1", "region": "NA"}),
            ),
            1 => (
                "pod-2",
                json!({"player": p, "match": i, "points": points.to_string(), "game": "g1", "region": "EU"}),
            ),
            _ => (
                "pod-3",
                json!({"who": {"id": p, "dc": "NA"}, "id": format!("m{i}"),
                                  "result": {"tenths": points * 10}, "at": 1_700_000_000_000_i64}),
            ),
        };
        records.push(record(source, i, p, &event));
        // Every fifth event is delivered twice (a redelivery within the batch).
        if i % 5 == 0 {
            records.push(record(source, i, p, &event));
        }
    }
    // Poison: not JSON, a field missing, a score needing rounding, an unknown source.
    records.push(StreamRecord {
        payload: b"{not json".to_vec(),
        ..record("pod-1", 900, "ann", &json!({}))
    });
    records.push(record(
        "pod-2",
        901,
        "bob",
        &json!({"player": "bob", "points": 1, "game": "g1", "region": "EU"}),
    ));
    records.push(record(
        "pod-3",
        902,
        "cid",
        &json!({"who": {"id": "cid", "dc": "NA"}, "id": "x",
        "result": {"tenths": 15}, "at": 1}),
    ));
    records.push(record("pod-9", 903, "eve", &json!({"player": "eve"})));

    // DynamoDB down: nothing applies; each partition is retried from its first record,
    // so the poison among them waits for the redelivery (sent once, then); the record
    // of a source with no mapping (alone in its partition) needs no store to refuse.
    ctx.store.set_down(true);
    let down = ingest_batch(&ctx, &records, |s| maps.get(s)).await;
    assert_eq!(down.applied, 0);
    let retry: Vec<(&str, &str)> = down
        .retry
        .iter()
        .map(|(p, at)| (p.as_str(), at.as_str()))
        .collect();
    assert_eq!(
        retry,
        [
            ("pod-1-0", "pod-1/0"),
            ("pod-2-0", "pod-2/1"),
            ("pod-3-0", "pod-3/2")
        ]
    );
    let codes: Vec<_> = down.dead_letters.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["no_mapping"]);
    ctx.store.set_down(false);

    let out = ingest_batch(&ctx, &records, |s| maps.get(s)).await;
    assert!(out.retry.is_empty());
    let mut codes: Vec<(&str, &str)> = out
        .dead_letters
        .iter()
        .map(|d| (d.position.as_str(), d.code))
        .collect();
    codes.sort_unstable();
    assert_eq!(
        codes,
        [
            ("pod-1/900", "not_json"),
            ("pod-2/901", "unmappable"),
            ("pod-3/902", "unmappable"),
            ("pod-9/903", "no_mapping")
        ]
    );
    assert!(
        out.dead_letters
            .iter()
            .all(|d| !d.reason.is_empty() && !d.payload.is_empty())
    );
    // The whole batch again, as after a crash before the offsets were committed.
    ingest_batch(&ctx, &records, |s| maps.get(s)).await;
    let global = LeaderboardId::parse("g1:ranked:GLOBAL:ALL_TIME").unwrap();
    for (p, total) in &totals {
        let s = standing(&ctx, &global, p).await.expect("a standing");
        assert_eq!(s.score.get(), *total, "{p}");
    }
    // The regional boards got only their region's events.
    let eu = LeaderboardId::parse("g1:ranked:EU:ALL_TIME").unwrap();
    let eu_total: i64 = (0..60_usize)
        .filter(|i| i % 3 == 1 && players[i % 4] == "bob")
        .map(|i| (i as i64 % 9) + 1)
        .sum();
    assert_eq!(
        standing(&ctx, &eu, "bob").await.map(|s| s.score.get()),
        Some(eu_total).filter(|t| *t > 0)
    );
}

#[tokio::test]
async fn a_mapping_gets_a_new_version_per_change_and_refuses_a_stale_edit() {
    use leaderboard_core::service::ServiceError;
    use leaderboard_core::service::boards::Created;
    use leaderboard_core::service::mappings::{get_mapping, put_mapping};

    let ctx = ctx();
    let body = |score: &str| {
        json!({"fields": {"player_id": "/p", "match_id": "/m", "score": score,
            "game": {"const": "g1"}, "mode": {"const": "ranked"}, "region": "/r"}})
    };
    let first = put_mapping(&ctx.store, "pod-1", body("/s")).await.unwrap();
    assert!(matches!(&first, Created::New(m) if m.version == 1 && m.source == "pod-1"));
    // The same mapping again changes nothing.
    let again = put_mapping(&ctx.store, "pod-1", body("/s")).await.unwrap();
    assert!(matches!(again, Created::Existing(m) if m.version == 1));
    let second = put_mapping(&ctx.store, "pod-1", body("/points"))
        .await
        .unwrap();
    assert!(matches!(second, Created::New(m) if m.version == 2));
    // An edit made against version 1 (it would become 2) is refused, not applied.
    let mut stale = body("/score");
    stale["version"] = json!(2);
    let refused = put_mapping(&ctx.store, "pod-1", stale).await.unwrap_err();
    assert!(matches!(
        refused,
        ServiceError::MappingConflict { current: 2, .. }
    ));
    assert_eq!(
        get_mapping(&ctx.store, "pod-1", None)
            .await
            .unwrap()
            .version,
        2
    );
    let v1 = get_mapping(&ctx.store, "pod-1", Some("1")).await.unwrap();
    assert_eq!(
        v1.fields.score,
        leaderboard_rules::mapping::FieldSource::Path("/s".into())
    );
    // Bad input: a body naming another source, a pointer without its slash, no mapping.
    let mut other = body("/s");
    other["source"] = json!("pod-2");
    assert_eq!(
        put_mapping(&ctx.store, "pod-1", other)
            .await
            .unwrap_err()
            .code(),
        "invalid_request"
    );
    assert_eq!(
        put_mapping(&ctx.store, "pod-1", body("s"))
            .await
            .unwrap_err()
            .code(),
        "invalid_request"
    );
    assert_eq!(
        get_mapping(&ctx.store, "pod-7", None)
            .await
            .unwrap_err()
            .code(),
        "mapping_not_found"
    );
}

#[tokio::test]
async fn an_event_every_window_refuses_is_dead_lettered_not_dropped() {
    let ctx = ctx();
    let mut req = CreateFamily::new("g9", "ranked", Policy::Sum, &["NA"], &[Period::Daily]);
    req.grace_seconds = 0;
    req.dense_ranks = true;
    boards::create_family(&ctx.store, req).await.unwrap();
    let m = mapping(
        json!({"source": "pod-9", "fields": {"player_id": "/p", "match_id": "/m",
        "score": "/s", "game": {"const": "g9"}, "mode": {"const": "ranked"},
        "region": {"const": "NA"}, "event_ts": "/at"}, "timestamp": "epoch_millis"}),
    );
    let now = leaderboard_rules::time::now_ms();
    let old = record(
        "pod-9",
        1,
        "ann",
        &json!({"p": "ann", "m": 1, "s": 5, "at": now - 3 * 86_400_000}),
    );
    let fresh = record(
        "pod-9",
        2,
        "ann",
        &json!({"p": "ann", "m": 2, "s": 5, "at": now}),
    );
    let out = ingest_batch(&ctx, &[old, fresh], |_| Some(&m)).await;
    assert_eq!(out.applied, 1);
    let letters: Vec<_> = out
        .dead_letters
        .iter()
        .map(|d| (d.position.as_str(), d.code))
        .collect();
    assert_eq!(letters, [("pod-9/1", "window_closed")]);
    assert!(
        out.dead_letters[0]
            .reason
            .starts_with("every window refused it")
    );
}

#[tokio::test]
async fn stream_results_count_in_the_tournaments_their_players_joined_each_match_once() {
    use leaderboard_core::service::operator::Operator;
    use leaderboard_core::service::tournaments;

    let ctx = ctx();
    family(&ctx).await;
    let cup = json!({"tournament_id": "cup", "game": "g1", "mode": "ranked", "policy": "SUM",
        "title": "Cup", "schedule": {"period": "WEEKLY"}, "max_attempts": 2, "cohort_size": 2});
    let cup = serde_json::from_value(cup).unwrap();
    tournaments::create(&ctx, &Operator("test".into()), cup)
        .await
        .unwrap();
    let ann = leaderboard_rules::ids::PlayerId::parse("ann").unwrap();
    tournaments::join(&ctx, "cup", &ann).await.unwrap();
    let maps = mappings();
    // Three matches of ann's, each delivered twice; one of bob's, who never joined.
    let mut records = Vec::new();
    for (i, p) in [(0, "ann"), (1, "ann"), (2, "ann"), (3, "bob")] {
        let event =
            json!({"player": p, "match": i, "points": 10 + i, "game": "g1", "region": "NA"});
        records.push(record("pod-1", i, p, &event));
        records.push(record("pod-1", i, p, &event));
    }
    let out = ingest_batch(&ctx, &records, |s| maps.get(s)).await;
    assert!(
        out.retry.is_empty() && out.dead_letters.is_empty(),
        "{:?}",
        out.dead_letters
    );
    // The family's board counts all three; the tournament the first two (its attempts).
    let global = LeaderboardId::parse("g1:ranked:GLOBAL:ALL_TIME").unwrap();
    assert_eq!(
        standing(&ctx, &global, "ann").await.map(|s| s.score.get()),
        Some(33)
    );
    let week = leaderboard_rules::window::window_of(
        Period::Weekly,
        None,
        leaderboard_rules::time::now_ms(),
    )
    .unwrap()
    .key
    .unwrap();
    let occ = LeaderboardId::parse(&format!("t:cup:{week}")).unwrap();
    assert_eq!(
        standing(&ctx, &occ, "ann").await.map(|s| s.score.get()),
        Some(21)
    );
    let cohort = LeaderboardId::parse(&format!("t:cup:{week}:c0")).unwrap();
    assert_eq!(
        standing(&ctx, &cohort, "ann").await.map(|s| s.score.get()),
        Some(21)
    );
    assert_eq!(standing(&ctx, &occ, "bob").await, None);
}

#[tokio::test]
async fn a_dry_run_checks_a_mapping_as_a_store_would_and_stores_nothing() {
    use leaderboard_core::service::mappings::{check_mapping, get_mapping, put_mapping};

    let ctx = ctx();
    let body = |score: Value| {
        json!({"fields": {"player_id": "/p", "match_id": "/m", "score": score,
            "game": {"const": "g1"}, "mode": {"const": "ranked"}, "region": "/r"}})
    };
    let would = check_mapping(&ctx.store, "pod-3", body(json!("/s")))
        .await
        .unwrap();
    assert_eq!(would.version, 1);
    assert_eq!(
        get_mapping(&ctx.store, "pod-3", None)
            .await
            .unwrap_err()
            .code(),
        "mapping_not_found"
    );
    let refused = check_mapping(&ctx.store, "pod-3", body(json!({"const": "5"})))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "invalid_request");
    assert!(refused.to_string().contains("fields.score"), "{refused}");
    put_mapping(&ctx.store, "pod-3", body(json!("/s")))
        .await
        .unwrap();
    // The same again would change nothing; another would be version 2, still unstored.
    let same = check_mapping(&ctx.store, "pod-3", body(json!("/s")))
        .await
        .unwrap();
    let next = check_mapping(&ctx.store, "pod-3", body(json!("/points")))
        .await
        .unwrap();
    assert_eq!((same.version, next.version), (1, 2));
    assert_eq!(
        get_mapping(&ctx.store, "pod-3", None)
            .await
            .unwrap()
            .version,
        1
    );
}
