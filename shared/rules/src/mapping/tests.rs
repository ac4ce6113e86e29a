use super::*;
use crate::decimal::Decimals;
use crate::match_result::MatchResult;
use serde_json::json;

fn pod_a() -> Mapping {
    serde_json::from_value::<Mapping>(json!({
        "source": "pod-a",
        "fields": {"player_id": "/player", "match_id": "/match", "score": "/score",
                   "game": "/game", "mode": "/mode", "region": "/region",
                   "event_ts": "/ts"}
    }))
    .unwrap()
    .validated()
    .unwrap()
}

fn pod_b() -> Mapping {
    serde_json::from_value::<Mapping>(json!({
        "source": "pod-b",
        "fields": {"player_id": "/user/id", "match_id": "/m", "score": "/result/seconds",
                   "game": {"const": "g1"}, "mode": {"const": "race"}, "region": "/dc",
                   "event_ts": "/at"},
        "score_scale": {"multiply": 1000},
        "timestamp": "epoch_seconds"
    }))
    .unwrap()
    .validated()
    .unwrap()
}

fn result(m: &Mapping, event: Value) -> MatchResult {
    MatchResult::new(m.apply(&event).expect("mapped")).expect("a valid result")
}

#[test]
fn two_schemas_map_to_the_same_canonical_result() {
    let a = result(
        &pod_a(),
        json!({"player": "ann", "match": "m7", "score": 1234, "game": "g1",
               "mode": "race", "region": "NA", "ts": "2026-11-22T10:00:00Z"}),
    );
    let b = result(
        &pod_b(),
        json!({"user": {"id": "ann"}, "m": 7, "result": {"seconds": "1.234"},
               "dc": "NA", "at": 1_795_341_600}),
    );
    let whole = |r: &MatchResult| r.score.scaled(Decimals::default()).unwrap().get();
    assert_eq!((whole(&a), whole(&b)), (1234, 1234));
    assert_eq!((a.player.as_str(), b.player.as_str()), ("ann", "ann"));
    assert_eq!((a.game.as_str(), b.mode.as_str()), ("g1", "race"));
    assert_eq!(a.event_ts, b.event_ts);
    // The idempotency key names the source, so sources never collide.
    assert_eq!(a.match_id.as_str(), "pod-a:m7");
    assert_eq!(b.match_id.as_str(), "pod-b:7");
}

#[test]
fn subscores_come_from_the_event_one_pointer_per_column_and_each_must_be_there() {
    let mut m = pod_a();
    m.fields.subscores = vec![
        FieldSource::Path("/stats/stars".into()),
        FieldSource::Path("/stats/moves".into()),
    ];
    let m = m.validated().unwrap();
    let event = json!({"player": "ann", "match": "m7", "score": 3, "game": "g1",
                       "mode": "race", "region": "NA", "ts": "2026-11-22T10:00:00Z",
                       "stats": {"stars": 2, "moves": 40}});
    let r = result(&m, event.clone());
    assert_eq!(
        r.subscores.iter().map(|s| s.get()).collect::<Vec<_>>(),
        [2, 40]
    );
    let mut missing = event;
    missing["stats"]["moves"] = Value::Null;
    assert_eq!(m.apply(&missing).unwrap_err().field, "subscores");
    // No pointers: no subscores, as before columns existed.
    assert!(
        result(
            &pod_a(),
            json!({"player": "ann", "match": "m7", "score": 3, "game": "g1",
                   "mode": "race", "region": "NA", "ts": "2026-11-22T10:00:00Z"})
        )
        .subscores
        .is_empty()
    );
    let mut constant = m.clone();
    constant.fields.subscores = vec![FieldSource::Const { value: "1".into() }];
    let e = constant.validated().unwrap_err();
    assert!(e.to_string().starts_with("fields.subscores"), "{e}");
    let mut four = m;
    four.fields.subscores = vec![FieldSource::Path("/a".into()); 4];
    assert!(four.validated().is_err());
}

#[test]
fn an_unscaled_score_keeps_its_decimal_text_for_the_familys_places() {
    let three = Decimals::new("decimals", 3).unwrap();
    for score in [json!(83.417), json!("83.417"), json!(" 83.4170 ")] {
        let event = json!({"player": "ann", "match": "m7", "score": score, "game": "g1",
                           "mode": "race", "region": "NA", "ts": "2026-11-22T10:00:00Z"});
        let r = result(&pod_a(), event);
        assert_eq!(r.score.scaled(three).unwrap().get(), 83_417, "{score}");
        // On an integer family the same result is refused, never rounded.
        assert!(r.score.scaled(Decimals::default()).is_err());
    }
}

#[test]
fn a_mapping_may_point_at_metadata_which_the_result_checks() {
    let mut m = pod_a();
    m.fields.metadata = Some(FieldSource::Path("/extra".into()));
    let m = m.validated().unwrap();
    let event = json!({"player": "ann", "match": "m7", "score": 5, "game": "g1",
                       "mode": "race", "region": "NA", "ts": "2026-11-22T10:00:00Z",
                       "extra": {"replay": "r-7"}});
    let r = result(&m, event.clone());
    assert_eq!(r.metadata.unwrap().as_str(), r#"{"replay":"r-7"}"#);
    // Nothing there: no metadata, the event still maps.
    let mut bare = event.clone();
    bare.as_object_mut().unwrap().remove("extra");
    assert!(result(&m, bare).metadata.is_none());
    // Something there that is not an object: the result refuses it (dead-lettered).
    let mut wrong = event;
    wrong["extra"] = json!(["r-7"]);
    let refused = MatchResult::new(m.apply(&wrong).unwrap()).unwrap_err();
    assert!(refused.to_string().starts_with("metadata"), "{refused}");
    // A constant is no metadata: refused before it is stored.
    let mut constant = pod_a();
    constant.fields.metadata = Some(FieldSource::Const { value: "x".into() });
    let refused = constant.validated().unwrap_err();
    assert!(refused.to_string().contains("fields.metadata"), "{refused}");
}

#[test]
fn an_event_that_cannot_be_mapped_names_the_field_and_why() {
    let b = pod_b();
    let base = json!({"user": {"id": "ann"}, "m": 7, "result": {"seconds": 1.5},
                      "dc": "NA", "at": 1_795_341_600});
    let broken = |pointer: &str, v: Value| {
        let mut e = base.clone();
        *e.pointer_mut(pointer).unwrap() = v;
        b.apply(&e).unwrap_err()
    };
    assert_eq!(broken("/user", json!({})).field, "player_id");
    assert_eq!(broken("/m", json!(null)).field, "match_id");
    assert_eq!(broken("/m", json!(1.5)).field, "match_id");
    assert_eq!(broken("/result/seconds", json!("fast")).field, "score");
    // 1.2345 s is 1234.5 ms: refused, never rounded.
    let not_whole = broken("/result/seconds", json!(1.2345));
    assert!(
        not_whole.reason.contains("not a whole number"),
        "{not_whole}"
    );
    assert_eq!(broken("/result/seconds", json!("1e400")).field, "score");
    assert_eq!(broken("/at", json!("yesterday")).field, "event_ts");
    assert_eq!(
        b.apply(&json!("not an object")).unwrap_err().field,
        "match_id"
    );
    // Mapped, but the canonical rules refuse it (as POST /scores would).
    let bad_region = b
        .apply(&json!({"user": {"id": "ann"}, "m": 7,
        "result": {"seconds": 1}, "dc": "N A", "at": 1}))
        .unwrap();
    assert!(MatchResult::new(bad_region).is_err());
}

#[test]
fn scales_are_exact_over_the_whole_score_range() {
    let ms = ScoreScale {
        multiply: 1000,
        divide: 1,
    };
    let tenths = ScoreScale {
        multiply: 1,
        divide: 10,
    };
    assert_eq!(scale("12", ms), Some(Ok(12_000)));
    assert_eq!(scale("-0.001", ms), Some(Ok(-1)));
    assert_eq!(scale("2.5e1", ms), Some(Ok(25_000)));
    assert_eq!(scale("120", tenths), Some(Ok(12)));
    assert!(matches!(scale("125", tenths), Some(Err(_))));
    assert_eq!(
        scale("9007199254740991", ScoreScale::default()),
        Some(Ok(9_007_199_254_740_991))
    );
    assert!(matches!(scale("1e30", ms), Some(Err(_))));
    assert_eq!(scale("", ms), None);
    assert_eq!(scale("1.2.3", ms), None);
    assert_eq!(scale("0x10", ms), None);
}

#[test]
fn mappings_are_checked_before_they_are_stored() {
    let bad = |patch: Value| {
        let mut raw = serde_json::to_value(pod_b()).unwrap();
        for (k, v) in patch.as_object().unwrap() {
            *raw.pointer_mut(k).unwrap() = v.clone();
        }
        serde_json::from_value::<Mapping>(raw)
            .map_err(|e| e.to_string())
            .and_then(|m| m.validated().map_err(|e| e.to_string()))
            .unwrap_err()
    };
    assert!(bad(json!({"/source": "pod b"})).contains("source"));
    assert!(bad(json!({"/fields/player_id": "user/id"})).contains("pointer"));
    assert!(bad(json!({"/fields/game": {"const": "g:1"}})).contains("game"));
    assert!(bad(json!({"/fields/score": {"const": "5"}})).contains("score"));
    assert!(bad(json!({"/score_scale/divide": 0})).contains("score_scale"));
    assert!(bad(json!({"/score_scale/multiply": 1_i64 << 53})).contains("score_scale"));
    assert!(bad(json!({"/timestamp": "unix"})).contains("unknown variant"));
}
