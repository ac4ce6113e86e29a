use super::*;
use serde_json::json;

fn field_of(e: DomainError) -> String {
    match e {
        DomainError::Invalid { field, .. } => field.into_owned(),
        other => panic!("not a field error: {other:?}"),
    }
}

fn weekly() -> serde_json::Value {
    json!({"tournament_id": "weekly-cup", "game": "g1", "mode": "race",
           "title": "Weekly cup", "schedule": {"period": "WEEKLY"},
           "max_attempts": 3, "cohort_size": 50})
}

fn checked(v: serde_json::Value) -> Result<Tournament, DomainError> {
    serde_json::from_value::<Tournament>(v).unwrap().validated()
}

#[test]
fn a_sound_definition_passes_with_its_defaults() {
    let t = checked(weekly()).unwrap();
    assert!(t.join_required);
    assert_eq!(t.policy, Policy::Best);
    assert_eq!(t.schedule.period, Some(Period::Weekly));
    let once = json!({"start": 1_000, "end": 2_000});
    let t = checked(
        json!({"tournament_id": "launch", "game": "g1", "mode": "race",
                           "title": "Launch night", "schedule": once,
                           "join_required": false}),
    )
    .unwrap();
    assert_eq!(
        (t.schedule.start, t.schedule.end),
        (Some(1_000), Some(2_000))
    );
    assert_eq!(t.seating(), None);
}

#[test]
fn impossible_values_are_refused_naming_the_field() {
    let with = |k: &str, v: serde_json::Value| {
        let mut body = weekly();
        body[k] = v;
        field_of(checked(body).unwrap_err())
    };
    assert_eq!(with("cohort_size", json!(1)), "cohort_size");
    assert_eq!(with("cohort_size", json!(1_001)), "cohort_size");
    assert_eq!(with("max_attempts", json!(0)), "max_attempts");
    assert_eq!(with("max_players", json!(0)), "max_players");
    assert_eq!(with("schedule", json!({"start": 5, "end": 5})), "schedule");
    assert_eq!(with("schedule", json!({"period": "ALL_TIME"})), "schedule");
    assert_eq!(with("schedule", json!({"start": 1})), "schedule");
    // Instants outside what the service stores: before 1970 (an offset can take a
    // year-0 date there) or past 9999, as ms or as text.
    let early = json!({"start": "0000-01-01T00:00:00+01:00", "end": 5});
    assert_eq!(with("schedule", early), "schedule");
    assert_eq!(with("schedule", json!({"start": -5, "end": 5})), "schedule");
    let late = json!({"start": 5, "end": "9999-12-31T23:59:59.999-01:00"});
    assert_eq!(with("schedule", late), "schedule");
    let both = json!({"start": 1, "end": 2, "period": "DAILY"});
    assert_eq!(with("schedule", both), "schedule");
    assert_eq!(with("tournament_id", json!("has space")), "tournament_id");
    assert_eq!(with("title", json!("")), "title");
    assert_eq!(with("title", json!("evil\u{202e}txt")), "title");
    assert_eq!(with("description", json!("x".repeat(1_001))), "description");
    assert_eq!(with("game", json!("no spaces please")), "game");
    // A field the definition does not know is refused before any check.
    let mut unknown = weekly();
    unknown["surprise"] = json!(1);
    assert!(serde_json::from_value::<Tournament>(unknown).is_err());
}

#[test]
fn a_definition_reads_back_as_stored_whatever_its_optional_fields() {
    let full = json!({"tournament_id": "t-1", "game": "g1", "mode": "race",
        "policy": "SUM", "title": "Cup", "description": "", "category": "events",
        "schedule": {"start": "2026-11-25T10:00:00.123Z", "end": "2026-11-26T10:00:00Z"},
        "join_required": false, "max_players": 10_000_000, "max_attempts": 4_294_967_295_u32,
        "cohort_size": 1_000, "grace_seconds": 86_400});
    for body in [full, weekly()] {
        let t = checked(body).unwrap();
        let stored = serde_json::to_string(&t).unwrap();
        assert_eq!(
            serde_json::from_str::<Tournament>(&stored).unwrap(),
            t,
            "{stored}"
        );
    }
}

#[test]
fn history_scopes_are_a_familys_or_a_tournaments_and_its_cohorts() {
    for ok in [
        "GLOBAL",
        "EU",
        "t:weekly-cup",
        "t:weekly-cup:c0",
        "t:w:c1234567890",
    ] {
        assert_eq!(history_scope(ok).unwrap(), ok);
    }
    for bad in [
        "t:",
        "t:a:b",
        "t:a:c",
        "t:a:cx",
        "t:a:c1:c2",
        "t:a b",
        "has space",
        "x:y",
    ] {
        assert_eq!(field_of(history_scope(bad).unwrap_err()), "scope", "{bad}");
    }
}

#[test]
fn occurrences_follow_the_schedule_and_name_their_boards() {
    let t = checked(weekly()).unwrap();
    // Wednesday 2026-11-25 is in ISO week 48, Monday the 23rd to Monday the 30th.
    let now = 1_795_600_000_000;
    let occ = t.schedule.occurrence_at(now).unwrap();
    assert_eq!(occ.key, "2026-W48");
    assert!(occ.start <= now && now < occ.end);
    assert_eq!(occ.end - occ.start, 7 * 86_400_000);
    assert_eq!(t.board_id(&occ).as_str(), "t:weekly-cup:2026-W48");
    assert_eq!(
        t.cohort_board_id(&occ, 3).as_str(),
        "t:weekly-cup:2026-W48:c3"
    );

    let once = Schedule {
        start: Some(1_000),
        end: Some(2_000),
        period: None,
    };
    assert_eq!(
        once.occurrence_at(999),
        Err(NotRunning::NotStarted { starts_at: 1_000 })
    );
    assert_eq!(once.occurrence_at(1_000).unwrap().key, "once");
    assert_eq!(
        once.occurrence_at(2_000),
        Err(NotRunning::Ended { ended_at: 2_000 })
    );
}

#[test]
fn seats_fill_open_cohorts_together_never_over_size_and_whole_blocks_leave_none_partial() {
    let s = Seating { size: 50, open: 4 };
    let mut counts = std::collections::BTreeMap::<u64, u32>::new();
    for seat in 0..1_000 {
        let p = s.place(seat);
        assert_eq!(
            p.position,
            counts.get(&p.cohort).copied().unwrap_or(0),
            "seat {seat}"
        );
        *counts.entry(p.cohort).or_default() += 1;
        // At any moment at most `open` cohorts are partly filled.
        let partial = counts.values().filter(|&&n| n < 50).count();
        assert!(partial <= 4, "{partial} partial after seat {seat}");
    }
    assert_eq!(counts.len(), 20);
    assert!(counts.values().all(|&n| n == 50), "{counts:?}");
    // Each cohort's seats are the ones placed in it, in order.
    for c in 0..20 {
        for (k, seat) in s.seats_of(c).into_iter().enumerate() {
            assert_eq!(
                (s.place(seat).cohort, s.place(seat).position as usize),
                (c, k)
            );
        }
    }
    // Consecutive joins spread over the open cohorts.
    let first: Vec<u64> = (0..4).map(|seat| s.place(seat).cohort).collect();
    assert_eq!(first, [0, 1, 2, 3]);
}

/// How `joins` players sit in cohorts of `size` under `seating`: each cohort's count.
fn sat(seating: Option<CohortSeating>, size: u32, joins: u64) -> Vec<u32> {
    let mut t = checked(weekly()).unwrap();
    t.cohort_size = Some(size);
    t.cohort_seating = seating;
    let s = t.seating().unwrap();
    let mut counts = std::collections::BTreeMap::<u64, u32>::new();
    for seat in 0..joins {
        *counts.entry(s.place(seat).cohort).or_default() += 1;
    }
    counts.into_values().collect()
}

#[test]
fn a_filling_occurrence_sits_in_as_few_cohorts_as_the_size_allows() {
    let fill = Some(CohortSeating::Fill);
    assert_eq!(sat(fill, 4, 7), [4, 3]);
    assert_eq!(sat(fill, 50, 60), [50, 10]);
    assert_eq!(sat(fill, 50, 1_000), [50; 20]);
    // Spread (and a definition stored before the setting) deals over 4 cohorts.
    assert_eq!(sat(Some(CohortSeating::Spread), 4, 7), [2, 2, 2, 1]);
    assert_eq!(sat(None, 50, 60), [15, 15, 15, 15]);
    // Filling, each cohort's seats are the ones placed in it, in order.
    let s = Seating { size: 4, open: 1 };
    for c in 0..5 {
        for (k, seat) in s.seats_of(c).into_iter().enumerate() {
            assert_eq!(
                (s.place(seat).cohort, s.place(seat).position as usize),
                (c, k)
            );
        }
    }
}

#[test]
fn a_leagues_tiers_seat_apart_and_their_cohort_numbers_say_the_tier() {
    let s = Seating { size: 30, open: 4 };
    for tier in [0, 1, 2, 19] {
        let first = tier_seats(tier).start;
        for local in [0, 1, 119, 120, 5_000] {
            let p = s.place(first + local);
            assert_eq!(p.tier, tier);
            assert_eq!(tier_of_cohort(p.cohort), tier);
            // The same place within the tier as tier 0's seat of that number.
            let base = s.place(local);
            assert_eq!(
                (p.cohort - tier as u64 * TIER_COHORTS, p.position),
                (base.cohort, base.position)
            );
            assert!(s.seats_of(p.cohort).contains(&(first + local)));
        }
    }
    // A tournament's largest occurrence stays inside tier 0's numbers.
    let smallest = Seating {
        size: MIN_COHORT,
        open: 1,
    };
    let last = smallest.place(u64::from(MAX_PLAYERS) - 1);
    assert_eq!((last.tier, tier_of_cohort(last.cohort)), (0, 0));
}

#[test]
fn a_league_needs_cohorts_and_a_recurring_schedule_and_knows_its_previous_occurrence() {
    let league = json!({"tiers": [{"id": "bronze", "promote": {"count": 3}},
                                  {"id": "silver", "demote": {"count": 3}}]});
    let mut v = weekly();
    v["league"] = league.clone();
    let t = checked(v.clone()).unwrap();
    assert_eq!(t.league.as_ref().unwrap().tiers.len(), 2);
    let mut no_cohorts = v.clone();
    no_cohorts.as_object_mut().unwrap().remove("cohort_size");
    assert_eq!(field_of(checked(no_cohorts).unwrap_err()), "league");
    let mut once = v.clone();
    once["schedule"] = json!({"start": 1_000, "end": 2_000});
    assert_eq!(field_of(checked(once).unwrap_err()), "league");
    let mut bad = v;
    bad["league"]["tiers"][0]["demote"] = json!({"count": 1});
    assert_eq!(
        field_of(checked(bad).unwrap_err()),
        "league.tiers[0].demote"
    );

    let occ = t.schedule.occurrence_at(1_795_600_000_000).unwrap();
    let before = t.previous(&occ).unwrap();
    assert_eq!((before.key.as_str(), before.end), ("2026-W47", occ.start));
    assert_eq!(t.seat_pool(&occ, 0), t.board_id(&occ));
    assert_eq!(t.seat_pool(&occ, 2).as_str(), "t:weekly-cup:2026-W48:s2");
}
