//! Time windows: the period of a board family's board that contains a moment.
//!
//! A match result at `event_ts` lands on one board per (scope, period) of its family
//! (see the `family` module), where the period's window is the one containing `event_ts`,
//! in UTC:
//!
//! | period | window key | bounds |
//! |---|---|---|
//! | `DAILY` | `2026-11-22` | midnight to midnight |
//! | `WEEKLY` | `2026-W47` (ISO 8601 week-year and week) | Monday 00:00 to the next Monday |
//! | `MONTHLY` | `2026-11` | the 1st to the 1st of the next month |
//! | `SEASON` | the season's id | the configured start and end |
//! | `ALL_TIME` | none | none |
//!
//! Board ids are `{game}:{mode}:{scope}:{PERIOD}[:{window}]`, e.g.
//! `g1:ranked:NA:DAILY:2026-11-22`. A window accepts writes until its end plus the
//! family's grace period; after that it is closed.

use chrono::{DateTime, Datelike, Months, NaiveDate, Utc, Weekday};
use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::schedule::ScheduleId;

/// The scope every result also counts in.
pub const GLOBAL: &str = "GLOBAL";
/// Longest game, mode, region or season name.
pub const MAX_NAME_LEN: usize = 32;
const DAY_MS: i64 = 86_400_000;

/// A game, mode, region or season name: 1 to 32 of `[A-Za-z0-9_-]` (no `:`, which
/// separates the parts of a board id).
pub fn parse_name(field: &'static str, raw: &str) -> Result<String, DomainError> {
    if raw.is_empty() || raw.len() > MAX_NAME_LEN {
        return Err(DomainError::invalid(
            field,
            format!("must be 1 to {MAX_NAME_LEN} characters"),
        ));
    }
    if !raw
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(DomainError::invalid(
            field,
            "allowed characters are A-Z a-z 0-9 _ -",
        ));
    }
    Ok(raw.to_owned())
}

/// How long a board of a family collects scores: a built-in UTC period, or one of the
/// family's own schedules (`schedule`), by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Period {
    AllTime,
    Season,
    Monthly,
    Weekly,
    Daily,
    /// A family's own schedule: a cron in a time zone, or a rolling window.
    Custom(ScheduleId),
}

impl Period {
    /// The built-in periods, by their names.
    const BUILT_IN: [(Period, &'static str); 5] = [
        (Self::AllTime, "ALL_TIME"),
        (Self::Season, "SEASON"),
        (Self::Monthly, "MONTHLY"),
        (Self::Weekly, "WEEKLY"),
        (Self::Daily, "DAILY"),
    ];

    pub fn as_str(&self) -> &str {
        match self {
            Self::AllTime => "ALL_TIME",
            Self::Season => "SEASON",
            Self::Monthly => "MONTHLY",
            Self::Weekly => "WEEKLY",
            Self::Daily => "DAILY",
            Self::Custom(id) => id.as_str(),
        }
    }

    /// A built-in period's name (`DAILY`, ...) or a schedule's id.
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, DomainError> {
        if let Some((p, _)) = Self::BUILT_IN.iter().find(|(_, name)| *name == raw) {
            return Ok(*p);
        }
        ScheduleId::parse(field, raw)
            .map(Self::Custom)
            .map_err(|_| {
                DomainError::invalid(
                    field,
                    "must be ALL_TIME, SEASON, MONTHLY, WEEKLY, DAILY or a schedule's id",
                )
            })
    }

    /// The schedule it names, if it is a family's own.
    pub fn schedule(&self) -> Option<ScheduleId> {
        match self {
            Self::Custom(id) => Some(*id),
            _ => None,
        }
    }
}

impl Serialize for Period {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Period {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse("period", &raw).map_err(serde::de::Error::custom)
    }
}

/// A configured season: `[start, end)` in ms since the epoch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Season {
    pub id: String,
    pub start: i64,
    pub end: i64,
}

/// One concrete window of a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeWindow {
    pub period: Period,
    /// `None` for ALL_TIME.
    pub key: Option<String>,
    /// `[start, end)` in ms; `None` for ALL_TIME.
    pub start: Option<i64>,
    pub end: Option<i64>,
}

/// Why a period has no window for a timestamp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoWindow {
    /// SEASON without a configured season, or a timestamp outside it.
    OutsideSeason,
    /// A family's own schedule whose cron has no firing on one side of the timestamp
    /// (or which the family does not have).
    NoFiring,
}

fn ms(date: NaiveDate) -> i64 {
    date.and_hms_opt(0, 0, 0)
        .map(|dt| dt.and_utc().timestamp_millis())
        .unwrap_or_default()
}

/// The window of a built-in `period` that contains `ts_ms`, in UTC whatever the
/// machine's zone (a family's own schedules: `family::Family::window_of`).
pub fn window_of(
    period: Period,
    season: Option<&Season>,
    ts_ms: i64,
) -> Result<TimeWindow, NoWindow> {
    let date = DateTime::<Utc>::from_timestamp_millis(ts_ms)
        .unwrap_or_default()
        .date_naive();
    let window = |key: String, start: i64, end: i64| TimeWindow {
        period,
        key: Some(key),
        start: Some(start),
        end: Some(end),
    };
    Ok(match period {
        Period::AllTime => TimeWindow {
            period,
            key: None,
            start: None,
            end: None,
        },
        Period::Daily => {
            let start = ms(date);
            window(date.format("%Y-%m-%d").to_string(), start, start + DAY_MS)
        }
        Period::Weekly => {
            let iso = date.iso_week();
            let monday =
                NaiveDate::from_isoywd_opt(iso.year(), iso.week(), Weekday::Mon).unwrap_or(date);
            let start = ms(monday);
            window(
                format!("{}-W{:02}", iso.year(), iso.week()),
                start,
                start + 7 * DAY_MS,
            )
        }
        Period::Monthly => {
            let first = date.with_day(1).unwrap_or(date);
            let next = first.checked_add_months(Months::new(1)).unwrap_or(first);
            window(first.format("%Y-%m").to_string(), ms(first), ms(next))
        }
        Period::Season => match season {
            Some(s) if (s.start..s.end).contains(&ts_ms) => window(s.id.clone(), s.start, s.end),
            _ => return Err(NoWindow::OutsideSeason),
        },
        // A family's own schedule: `family::Family::window_of`.
        Period::Custom(_) => return Err(NoWindow::NoFiring),
    })
}

impl TimeWindow {
    /// When the window stops accepting writes: its end plus the grace period.
    pub fn closes_at(&self, grace_ms: i64) -> Option<i64> {
        self.end.map(|end| end + grace_ms)
    }

    /// True once `now_ms` is at or past [`TimeWindow::closes_at`].
    pub fn is_closed(&self, grace_ms: i64, now_ms: i64) -> bool {
        self.closes_at(grace_ms).is_some_and(|at| now_ms >= at)
    }

    /// True when `ts_ms` falls inside the window.
    pub fn contains(&self, ts_ms: i64) -> bool {
        self.start.is_none_or(|s| ts_ms >= s) && self.end.is_none_or(|e| ts_ms < e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;

    fn key(period: Period, ts: &str) -> String {
        window_of(period, None, at(ts)).unwrap().key.unwrap()
    }

    #[test]
    fn daily_windows_turn_at_utc_midnight() {
        assert_eq!(key(Period::Daily, "2026-11-22T23:59:59.999Z"), "2026-11-22");
        assert_eq!(key(Period::Daily, "2026-11-23T00:00:00Z"), "2026-11-23");
        // An offset in the input changes nothing: the window is the UTC day.
        assert_eq!(
            key(Period::Daily, "2026-11-23T08:00:00+09:00"),
            "2026-11-22"
        );
        let w = window_of(Period::Daily, None, at("2026-11-22T12:00:00Z")).unwrap();
        assert_eq!(
            (w.start, w.end),
            (
                Some(at("2026-11-22T00:00:00Z")),
                Some(at("2026-11-23T00:00:00Z"))
            )
        );
    }

    #[test]
    fn weekly_windows_are_iso_weeks_starting_monday() {
        assert_eq!(key(Period::Weekly, "2026-11-22T12:00:00Z"), "2026-W47"); // a Sunday
        assert_eq!(key(Period::Weekly, "2026-11-23T00:00:00Z"), "2026-W48"); // Monday
        let w = window_of(Period::Weekly, None, at("2026-11-22T12:00:00Z")).unwrap();
        assert_eq!(w.start, Some(at("2026-11-16T00:00:00Z")));
        assert_eq!(w.end, Some(at("2026-11-23T00:00:00Z")));
    }

    #[test]
    fn iso_week_53_and_week_1_cross_the_calendar_year() {
        // 2026 starts on a Thursday, so it has 53 ISO weeks.
        assert_eq!(key(Period::Weekly, "2026-12-31T10:00:00Z"), "2026-W53");
        assert_eq!(key(Period::Weekly, "2027-01-03T23:59:59Z"), "2026-W53");
        assert_eq!(key(Period::Weekly, "2027-01-04T00:00:00Z"), "2027-W01");
        // 2024-12-30 (Monday) already belongs to 2025-W01.
        assert_eq!(key(Period::Weekly, "2024-12-30T00:00:00Z"), "2025-W01");
        assert_eq!(key(Period::Weekly, "2024-12-29T23:59:59Z"), "2024-W52");
    }

    #[test]
    fn monthly_windows_cover_the_whole_month_including_leap_days() {
        assert_eq!(key(Period::Monthly, "2028-02-29T23:59:59Z"), "2028-02");
        let w = window_of(Period::Monthly, None, at("2028-02-10T00:00:00Z")).unwrap();
        assert_eq!(w.end, Some(at("2028-03-01T00:00:00Z")));
        let dec = window_of(Period::Monthly, None, at("2026-12-31T23:59:59.999Z")).unwrap();
        assert_eq!(dec.key.as_deref(), Some("2026-12"));
        assert_eq!(dec.end, Some(at("2027-01-01T00:00:00Z")));
    }

    #[test]
    fn seasons_use_their_configured_bounds() {
        let s = Season {
            id: "s3".into(),
            start: at("2026-09-01T00:00:00Z"),
            end: at("2026-12-01T00:00:00Z"),
        };
        let w = window_of(Period::Season, Some(&s), at("2026-11-30T23:59:59Z")).unwrap();
        assert_eq!(w.key.as_deref(), Some("s3"));
        assert_eq!(
            window_of(Period::Season, Some(&s), s.end),
            Err(NoWindow::OutsideSeason)
        );
        assert_eq!(
            window_of(Period::Season, Some(&s), s.start - 1),
            Err(NoWindow::OutsideSeason)
        );
        assert_eq!(
            window_of(Period::Season, None, s.start),
            Err(NoWindow::OutsideSeason)
        );
    }

    #[test]
    fn a_window_closes_exactly_at_end_plus_grace() {
        let w = window_of(Period::Daily, None, at("2026-11-22T12:00:00Z")).unwrap();
        let end = at("2026-11-23T00:00:00Z");
        let grace = 300_000;
        assert!(!w.is_closed(grace, end + grace - 1));
        assert!(w.is_closed(grace, end + grace));
        let all = window_of(Period::AllTime, None, 0).unwrap();
        assert!(!all.is_closed(0, i64::MAX));
    }
}
