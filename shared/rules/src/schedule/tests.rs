use super::*;
use crate::time::at;

fn cron(expr: &str, tz: &str) -> Cron {
    Cron {
        cron: expr.into(),
        time_zone: tz.into(),
        every: 1,
        anchor: None,
    }
}

fn window(c: &Cron, ts: &str) -> (String, i64, i64) {
    let w = c.window_of(at(ts)).expect("a window");
    (w.key, w.start, w.end)
}

fn checked(c: Cron) -> Result<Schedule, DomainError> {
    Schedule {
        id: ScheduleId::parse("id", "s").unwrap(),
        kind: Kind::Cron(c),
    }
    .validated()
}

#[test]
fn a_daily_cron_turns_at_the_zones_own_hour() {
    let sto = cron("0 4 * * *", "Europe/Stockholm");
    // 04:00 in Stockholm in November is 03:00 UTC.
    let (key, start, end) = window(&sto, "2026-11-27T12:00:00Z");
    assert_eq!(key, "20261127T0300Z");
    assert_eq!(start, at("2026-11-27T03:00:00Z"));
    assert_eq!(end, at("2026-11-28T03:00:00Z"));
    // A second before the turn is the day before; the turn itself starts the day.
    assert_eq!(window(&sto, "2026-11-27T02:59:59.999Z").0, "20261126T0300Z");
    assert_eq!(window(&sto, "2026-11-27T03:00:00Z").0, "20261127T0300Z");
    let ny = cron("0 23 * * *", "America/New_York");
    assert_eq!(window(&ny, "2026-11-27T12:00:00Z").0, "20261127T0400Z");
}

#[test]
fn across_dst_a_day_is_23_or_25_hours_and_keys_stay_in_order() {
    // Europe/Stockholm: clocks go forward on 2026-03-29 (02:00 -> 03:00) and back on
    // 2026-10-25 (03:00 -> 02:00).
    let midnight = cron("0 0 * * *", "Europe/Stockholm");
    let (_, start, end) = window(&midnight, "2026-03-29T12:00:00Z");
    assert_eq!(
        (start, end),
        (at("2026-03-28T23:00:00Z"), at("2026-03-29T22:00:00Z"))
    );
    assert_eq!(end - start, 23 * 3_600_000);
    let (_, start, end) = window(&midnight, "2026-10-25T12:00:00Z");
    assert_eq!(
        (start, end),
        (at("2026-10-24T22:00:00Z"), at("2026-10-25T23:00:00Z"))
    );
    assert_eq!(end - start, 25 * 3_600_000);
    // A firing in the skipped hour fires when the clock jumps to 03:00.
    let skipped = cron("30 2 * * *", "Europe/Stockholm");
    let (_, start, _) = window(&skipped, "2026-03-29T12:00:00Z");
    assert_eq!(start, at("2026-03-29T01:00:00Z"));
    // A firing in the repeated hour fires once, at its first occurrence.
    let repeated = cron("30 2 * * *", "Europe/Stockholm");
    let (_, start, end) = window(&repeated, "2026-10-25T12:00:00Z");
    assert_eq!(start, at("2026-10-25T00:30:00Z"));
    assert_eq!(end, at("2026-10-26T01:30:00Z"));
    // Hourly across both changes: every instant in exactly one window, in key order.
    let hourly = cron("0 * * * *", "Europe/Stockholm");
    for (from, to) in [
        ("2026-03-28T20:00:00Z", "2026-03-29T06:00:00Z"),
        ("2026-10-24T20:00:00Z", "2026-10-25T06:00:00Z"),
    ] {
        let mut t = at(from);
        let mut last: Option<(String, i64, i64)> = None;
        while t < at(to) {
            let w = hourly.window_of(t).unwrap();
            assert!(w.start <= t && t < w.end, "{t}");
            if let Some((key, _, end)) = &last {
                assert!(*key <= w.key && (w.start == *end || w.key == *key));
            }
            last = Some((w.key.clone(), w.start, w.end));
            t += 600_000;
        }
    }
    // The repeated hour is one window of two hours.
    let (_, start, end) = window(&hourly, "2026-10-25T00:30:00Z");
    assert_eq!(
        (start, end),
        (at("2026-10-25T00:00:00Z"), at("2026-10-25T02:00:00Z"))
    );
}

#[test]
fn every_two_weeks_counts_windows_from_the_anchor_both_ways() {
    let mut fortnight = cron("0 0 * * MON", "UTC");
    fortnight.every = 2;
    fortnight.anchor = Some(at("2026-01-05T00:00:00Z"));
    let c = checked(fortnight.clone()).unwrap();
    let Kind::Cron(fortnight) = c.kind else {
        unreachable!()
    };
    let (_, start, end) = window(&fortnight, "2026-01-20T00:00:00Z");
    assert_eq!(
        (start, end),
        (at("2026-01-19T00:00:00Z"), at("2026-02-02T00:00:00Z"))
    );
    let (_, start, end) = window(&fortnight, "2026-01-18T23:59:59Z");
    assert_eq!(
        (start, end),
        (at("2026-01-05T00:00:00Z"), at("2026-01-19T00:00:00Z"))
    );
    let (_, start, end) = window(&fortnight, "2025-12-29T00:00:00Z");
    assert_eq!(
        (start, end),
        (at("2025-12-22T00:00:00Z"), at("2026-01-05T00:00:00Z"))
    );
}

#[test]
fn a_schedule_the_service_cannot_run_is_refused_naming_its_field() {
    let field = |c: Cron| checked(c).unwrap_err().to_string();
    assert!(field(cron("0 4 * *", "UTC")).starts_with("schedules.cron"));
    assert!(field(cron("0 4 * * * *", "UTC")).starts_with("schedules.cron"));
    assert!(field(cron("61 4 * * *", "UTC")).starts_with("schedules.cron"));
    assert!(
        field(cron("*/5 * * * *", "UTC")).starts_with("schedules.cron"),
        "too often"
    );
    assert!(field(cron("0 4 * * *", "Mars/Olympus")).starts_with("schedules.time_zone"));
    let mut no_anchor = cron("0 0 * * MON", "UTC");
    no_anchor.every = 2;
    assert!(field(no_anchor.clone()).starts_with("schedules.anchor"));
    let mut off = no_anchor.clone();
    off.anchor = Some(at("2026-01-06T00:00:00Z"));
    assert!(field(off).starts_with("schedules.anchor"), "not a firing");
    let mut hourly = cron("0 * * * *", "UTC");
    hourly.every = 2;
    hourly.anchor = Some(at("2026-01-06T00:00:00Z"));
    assert!(field(hourly).starts_with("schedules.every"));
    let mut zero = cron("0 0 * * MON", "UTC");
    zero.every = 0;
    assert!(field(zero).starts_with("schedules.every"));
    assert!(
        checked(cron("0 * * * *", "Asia/Kolkata")).is_ok(),
        "hourly is fine"
    );
    let rolling = |s| Schedule {
        id: ScheduleId::parse("id", "r").unwrap(),
        kind: Kind::Rolling { rolling_seconds: s },
    };
    assert!(rolling(3_599).validated().is_err());
    assert!(rolling(30 * 86_400 + 1).validated().is_err());
    assert_eq!(
        rolling(86_400).validated().unwrap().rolling_ms(),
        Some(86_400_000)
    );
}

#[test]
fn schedule_ids_are_lower_case_names_that_copy() {
    let id = ScheduleId::parse("id", "nightly-eu_2").unwrap();
    let copy = id;
    assert_eq!(
        (id.as_str(), copy.to_string().as_str()),
        ("nightly-eu_2", "nightly-eu_2")
    );
    for bad in ["", "DAILY", "1st", "a b", "é", &"a".repeat(33)] {
        assert!(ScheduleId::parse("id", bad).is_err(), "{bad:?}");
    }
    assert!(ScheduleId::parse("id", "a").unwrap() < ScheduleId::parse("id", "b").unwrap());
    let s: Schedule = serde_json::from_value(serde_json::json!(
        {"id": "nightly", "cron": "0 4 * * *", "time_zone": "Europe/Stockholm"}))
    .unwrap();
    assert!(matches!(
        s.kind,
        Kind::Cron(Cron {
            every: 1,
            anchor: None,
            ..
        })
    ));
    let r: Schedule =
        serde_json::from_value(serde_json::json!({"id": "last-7d", "rolling_seconds": 604800}))
            .unwrap();
    assert_eq!(r.rolling_ms(), Some(604_800_000));
}
