use super::*;
use crate::decimal::{ScoreFormat, Style};

fn p(id: &str) -> PlayerId {
    PlayerId::parse(id).unwrap()
}

fn rows(rank: u64, players: &[(&str, i64)], first: u64) -> Rows {
    Rows {
        rank: Some(rank),
        score: None,
        entries: players
            .iter()
            .enumerate()
            .map(|(i, (id, score))| Row {
                subscores: None,
                rank: first + i as u64,
                player_id: (*id).into(),
                score: ScoreFormat::default().show_scaled(*score),
                card: Default::default(),
                metadata: None,
            })
            .collect(),
    }
}

#[test]
fn view_ids_round_trip_and_bounds_are_refused() {
    for v in [View::top(10).unwrap(), View::near(p("a:b_c"), 3).unwrap()] {
        assert_eq!(View::from_id(&v.id()), Some(v));
    }
    assert!(View::top(0).is_err());
    assert!(View::top(101).is_err());
    assert!(View::near(p("a"), 11).is_err());
    assert_eq!(View::from_id("top:x"), None);
    assert_eq!(View::from_id("near:99:a"), None);
    assert_eq!(View::from_id("other"), None);
}

#[test]
fn player_channels_spell_every_byte_outside_alphanumerics() {
    assert_eq!(player_channel(&p("alice")).unwrap(), "/players/alice");
    assert_eq!(
        player_channel(&p("a-b:c_d.e")).unwrap(),
        "/players/a-2db-3ac-5fd-2ee"
    );
    let long = p(&"x".repeat(120));
    let ch = player_channel(&long).unwrap();
    assert_eq!(ch.split('/').count(), 5, "{ch}");
    assert!(player_channel(&p(&":".repeat(100))).is_err());
    let lb = LeaderboardId::parse("g:m:GLOBAL:ALL_TIME").unwrap();
    let top = View::top(10).unwrap().channel(&lb).unwrap();
    assert!(top.starts_with("/leaderboards/") && top.ends_with("/top-10"));
    assert!(top.split('/').all(|s| s.len() <= SEGMENT_MAX));
}

#[test]
fn versions_follow_the_clock_and_never_go_back() {
    assert_eq!(next_version(None, 1_000), 1_000);
    assert_eq!(next_version(Some(900), 1_000), 1_000);
    assert_eq!(next_version(Some(1_000), 1_000), 1_001);
    assert_eq!(next_version(Some(5_000), 1_000), 5_001);
}

#[test]
fn a_decimal_boards_kept_rows_read_back_as_the_same_scores() {
    for style in [Style::Number, Style::String] {
        let three = ScoreFormat {
            style,
            ..ScoreFormat::asked(Some(3), None, None).unwrap()
        };
        let mut kept = rows(1, &[("x", 83_417), ("me", -1_250)], 1);
        // The range's edge, whose double has more places than any board keeps.
        for row in &mut kept.entries {
            row.score.format = three;
        }
        kept.entries[0].score = ScoreFormat {
            style,
            ..ScoreFormat::asked(Some(6), None, None).unwrap()
        }
        .show_scaled(9_007_199_254_740_991);
        kept.score = Some(three.show_scaled(-1_250));
        let json = serde_json::to_string(&kept).unwrap();
        assert!(
            json.contains("9007199254.740991") && json.contains("-1.250"),
            "{json}"
        );
        let back: Rows = serde_json::from_str(&json).unwrap();
        let again = serde_json::to_string(&back).unwrap();
        // Strings exactly; numbers through a double, so the same numbers.
        let value = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
        assert_eq!(value(&again), value(&json));
        if style == Style::String {
            assert_eq!((again, back), (json, kept));
        }
    }
}

#[test]
fn the_digest_ignores_nothing_in_the_rows_and_nothing_else_exists() {
    let a = rows(2, &[("x", 9), ("me", 8)], 1);
    let mut b = a.clone();
    assert_eq!(a.digest(), b.digest());
    b.entries[0].score.value = 10;
    assert_ne!(a.digest(), b.digest());
}

#[test]
fn overtaken_names_who_passed_and_entering_a_top_is_told() {
    let me = p("me");
    let before = rows(11, &[("a", 90), ("me", 80), ("b", 70)], 10);
    let now = rows(12, &[("a", 90), ("b", 85), ("me", 80)], 10);
    assert_eq!(
        notices(&me, Some(&before), &now),
        vec![Notice::Overtaken {
            by: vec!["b".into()],
            rank_before: 11,
            rank: 12
        }]
    );
    let up = rows(10, &[("me", 95), ("a", 90)], 10);
    assert_eq!(
        notices(&me, Some(&before), &up),
        vec![Notice::EnteredTop { top: 10 }]
    );
    assert!(notices(&me, None, &now).is_empty());
    assert!(notices(&me, Some(&now), &now).is_empty());
}
