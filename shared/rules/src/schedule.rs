//! A family's own periods (docs/schedules.md): beside the built-in UTC periods
//! (`window`), a family may declare schedules of its own, each with an id that names its
//! boards (`{game}:{mode}:{scope}:{id}[:{window}]`):
//!
//! - **cron** in a named IANA time zone: a window runs from one firing to the next, e.g.
//!   `0 4 * * *` in `Europe/Stockholm` turns the board over at 04:00 there every day;
//!   `every: 2` with an `anchor` firing makes each window two firings long (every two
//!   weeks). Window keys are the start instant in UTC, `20261127T0300Z`, so they read as
//!   a time and sort as one whatever the zone does.
//! - **rolling**: one board per scope that never closes, whose standings count only the
//!   results of the last `rolling_seconds` (see `rolling`).
//!
//! Daylight saving time: a cron is evaluated on the zone's wall clock. A firing in the
//! hour the clock repeats fires once, at its first occurrence; a firing in the hour the
//! clock skips fires when the clock jumps (the first wall time after the gap). So a
//! daily window is 23 or 25 hours long on the days the clock changes, and an hourly one
//! spans the repeated hour whole. Times are ms since the epoch, as everywhere.

use std::cmp::Ordering;
use std::str::FromStr;

use chrono::{DateTime, Duration, NaiveDateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::error::DomainError;

/// The longest schedule id.
pub const MAX_ID_LEN: usize = 32;
/// The most schedules a family may declare.
pub const MAX_SCHEDULES: usize = 8;
/// The shortest time between two firings of a cron: an hour.
pub const MIN_GAP_MS: i64 = 3_600_000;
/// A rolling window's bounds: an hour to 30 days.
pub const MIN_ROLLING_S: i64 = 3_600;
pub const MAX_ROLLING_S: i64 = 30 * 86_400;
/// The most firings a window may span (`every`).
pub const MAX_EVERY: u32 = 52;
/// How far a window computation walks from the anchor, in firings (`every` > 1 only,
/// whose firings are at least a day apart): 50 years of daily firings.
const MAX_WALK: u32 = 50 * 366;

/// A schedule's id: 1 to 32 of `[a-z0-9_-]`, starting with a letter. Lower case, so it
/// never reads as a built-in period (`DAILY`, ...). Kept inline, so a period naming it
/// is as cheap to copy as a built-in one.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ScheduleId {
    bytes: [u8; MAX_ID_LEN],
    len: u8,
}

impl ScheduleId {
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, DomainError> {
        let ok = !raw.is_empty()
            && raw.len() <= MAX_ID_LEN
            && raw.as_bytes()[0].is_ascii_lowercase()
            && raw
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
        if !ok {
            return Err(DomainError::invalid(
                field,
                "a schedule id is 1 to 32 of a-z 0-9 _ -, starting with a letter",
            ));
        }
        let mut bytes = [0; MAX_ID_LEN];
        bytes[..raw.len()].copy_from_slice(raw.as_bytes());
        Ok(Self {
            bytes,
            len: raw.len() as u8,
        })
    }

    pub fn as_str(&self) -> &str {
        // Only ASCII is ever stored (see `parse`).
        std::str::from_utf8(&self.bytes[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl Ord for ScheduleId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl PartialOrd for ScheduleId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl std::fmt::Debug for ScheduleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl std::fmt::Display for ScheduleId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ScheduleId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ScheduleId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(d)?;
        Self::parse("id", &raw).map_err(serde::de::Error::custom)
    }
}

/// A family's own schedule, as declared and stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    pub id: ScheduleId,
    #[serde(flatten)]
    pub kind: Kind,
}

/// How a schedule cuts time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Kind {
    Cron(Cron),
    Rolling {
        /// How far back results count, in seconds (an hour to 30 days).
        rolling_seconds: i64,
    },
}

/// Windows from one firing of a cron expression to the next (or the `every`-th next),
/// on the wall clock of `time_zone`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cron {
    /// Five fields: minute, hour, day of month, month, day of week.
    pub cron: String,
    /// An IANA time zone name, e.g. `Europe/Stockholm`.
    pub time_zone: String,
    /// How many firings one window spans (1: from each firing to the next).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub every: u32,
    /// A firing that starts a window, ms since the epoch (needed when `every` > 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchor: Option<i64>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// One window of a cron schedule: `[start, end)` in ms, and its key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CronWindow {
    pub key: String,
    pub start: i64,
    pub end: i64,
}

impl Schedule {
    /// The schedules a create body asks for (`schedules`: an array, absent or null for
    /// none), each read field by field so a refusal names its field; checked with
    /// [`Schedule::validated`] by the family.
    pub fn asked(raw: Option<&serde_json::Value>) -> Result<Vec<Self>, DomainError> {
        let items = match raw {
            None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => items,
            Some(_) => return Err(DomainError::invalid("schedules", "must be an array")),
        };
        (items.iter().enumerate())
            .map(|(i, v)| Self::read(v).map_err(|e| e.in_item("schedules", i)))
            .collect()
    }

    /// One schedule of a create body: `{id, cron, time_zone, every?, anchor?}` or
    /// `{id, rolling_seconds}`.
    fn read(v: &serde_json::Value) -> Result<Self, DomainError> {
        let obj = v
            .as_object()
            .ok_or_else(|| DomainError::invalid("schedules", "each must be an object"))?;
        const CRON: [&str; 5] = ["id", "cron", "time_zone", "every", "anchor"];
        const ROLLING: [&str; 2] = ["id", "rolling_seconds"];
        let rolling = obj.contains_key("rolling_seconds");
        let known: &[&str] = if rolling { &ROLLING } else { &CRON };
        if let Some(k) = obj.keys().find(|k| !known.contains(&k.as_str())) {
            let why = format!(
                "is not a field of a {} schedule",
                if rolling { "rolling" } else { "cron" }
            );
            return Err(DomainError::invalid(format!("schedules.{k}"), why));
        }
        let text = |field: &'static str, key: &str| match obj.get(key) {
            Some(serde_json::Value::String(s)) => Ok(s.clone()),
            _ => Err(DomainError::invalid(field, "is required, a string")),
        };
        let id = ScheduleId::parse("schedules.id", &text("schedules.id", "id")?)?;
        let int = |field: &'static str, key: &str| {
            obj.get(key)
                .map(|v| {
                    v.as_i64()
                        .ok_or_else(|| DomainError::invalid(field, "must be an integer"))
                })
                .transpose()
        };
        let kind = if rolling {
            Kind::Rolling {
                rolling_seconds: int("schedules.rolling_seconds", "rolling_seconds")?.unwrap_or(0),
            }
        } else {
            let every = int("schedules.every", "every")?.unwrap_or(1);
            Kind::Cron(Cron {
                cron: text("schedules.cron", "cron")?,
                time_zone: text("schedules.time_zone", "time_zone")?,
                every: u32::try_from(every).unwrap_or(0),
                anchor: (obj.get("anchor"))
                    .map(|a| crate::time::parse_ts("schedules.anchor", a))
                    .transpose()?,
            })
        };
        Ok(Self { id, kind })
    }

    /// The schedule as the API shows it (an anchor as RFC 3339).
    pub fn view(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let (
            Kind::Cron(Cron {
                anchor: Some(a), ..
            }),
            Some(obj),
        ) = (&self.kind, v.as_object_mut())
        {
            obj.insert("anchor".into(), crate::time::rfc3339_ms(*a).into());
        }
        v
    }

    /// Checks the schedule: its cron runs (five fields, a known time zone, firings at
    /// least an hour apart, a window's `every` and its anchor) or its rolling window is
    /// within bounds. Each refusal names its field (`schedules.…`).
    pub fn validated(self) -> Result<Self, DomainError> {
        match &self.kind {
            Kind::Rolling { rolling_seconds } => {
                if !(MIN_ROLLING_S..=MAX_ROLLING_S).contains(rolling_seconds) {
                    return Err(DomainError::invalid(
                        "schedules.rolling_seconds",
                        format!("must be {MIN_ROLLING_S} (an hour) to {MAX_ROLLING_S} (30 days)"),
                    ));
                }
            }
            Kind::Cron(c) => {
                c.compiled()?.check(c)?;
            }
        }
        Ok(self)
    }

    /// The rolling window's length in ms, for a rolling schedule.
    pub fn rolling_ms(&self) -> Option<i64> {
        match self.kind {
            Kind::Rolling { rolling_seconds } => Some(rolling_seconds * 1000),
            Kind::Cron(_) => None,
        }
    }
}

impl Cron {
    /// The expression and zone, compiled.
    fn compiled(&self) -> Result<Compiled, DomainError> {
        let fields = self.cron.split_whitespace().count();
        if fields != 5 {
            return Err(DomainError::invalid(
                "schedules.cron",
                "must have five fields: minute hour day-of-month month day-of-week",
            ));
        }
        // The cron crate's form has seconds first: every firing is at :00.
        let expr = cron::Schedule::from_str(&format!("0 {}", self.cron))
            .map_err(|e| DomainError::invalid("schedules.cron", format!("cannot be run: {e}")))?;
        let tz = jiff::tz::db().get(&self.time_zone).map_err(|_| {
            DomainError::invalid("schedules.time_zone", "is not an IANA time zone name")
        })?;
        Ok(Compiled { expr, tz })
    }

    /// The window of this schedule that contains `ts_ms`; `None` when the cron has no
    /// firing on one side of it (a schedule limited to some years, past its last).
    pub fn window_of(&self, ts_ms: i64) -> Option<CronWindow> {
        let c = self.compiled().ok()?;
        let (start, end) = match (self.every, self.anchor) {
            (n, Some(anchor)) if n > 1 => c.stretched(n, c.wall(anchor), c.wall(ts_ms))?,
            _ => {
                let at = c.wall(ts_ms);
                (c.at_or_before(at)?, c.after(at)?)
            }
        };
        let (start, end) = (c.instant(start), c.instant(end));
        Some(CronWindow {
            key: window_key(start),
            start,
            end,
        })
    }
}

/// A window key: its start instant in UTC, `YYYYMMDDTHHMMZ` (ISO 8601's basic form).
pub fn window_key(start_ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(start_ms)
        .unwrap_or_default()
        .format("%Y%m%dT%H%MZ")
        .to_string()
}

/// A compiled cron: firings are computed on the zone's wall clock (as naive times, read
/// through the UTC calendar, which has no gaps), then placed in time (`instant`).
struct Compiled {
    expr: cron::Schedule,
    tz: jiff::tz::TimeZone,
}

/// A wall-clock time as the cron crate takes it.
type Wall = DateTime<Utc>;

impl Compiled {
    /// The zone's wall-clock time at `ms`.
    fn wall(&self, ms: i64) -> Wall {
        let Ok(at) = jiff::Timestamp::from_millisecond(ms) else {
            return DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
        };
        let local = self.tz.to_datetime(at);
        let naive = chrono::NaiveDate::from_ymd_opt(
            i32::from(local.year()),
            u32::from(local.month().unsigned_abs()),
            u32::from(local.day().unsigned_abs()),
        )
        .and_then(|d| {
            d.and_hms_nano_opt(
                u32::from(local.hour().unsigned_abs()),
                u32::from(local.minute().unsigned_abs()),
                u32::from(local.second().unsigned_abs()),
                local.subsec_nanosecond().unsigned_abs(),
            )
        });
        naive.map_or_else(
            || DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default(),
            |n| n.and_utc(),
        )
    }

    /// The earliest instant (ms) the zone's clock shows `naive`; `None` in a gap the
    /// clock skips.
    fn earliest(&self, naive: NaiveDateTime) -> Option<i64> {
        use chrono::{Datelike, Timelike};
        use jiff::tz::AmbiguousOffset;
        let civil = jiff::civil::DateTime::new(
            i16::try_from(naive.year()).ok()?,
            i8::try_from(naive.month()).ok()?,
            i8::try_from(naive.day()).ok()?,
            i8::try_from(naive.hour()).ok()?,
            i8::try_from(naive.minute()).ok()?,
            i8::try_from(naive.second()).ok()?,
            0,
        )
        .ok()?;
        let offset = match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => offset,
            // A repeated hour: its first pass, on the offset before the change.
            AmbiguousOffset::Fold { before, .. } => before,
            AmbiguousOffset::Gap { .. } => return None,
        };
        Some(offset.to_timestamp(civil).ok()?.as_millisecond())
    }

    /// The instant of a wall-clock firing: its first occurrence when the clock repeats
    /// it, the end of the gap when the clock skips it.
    fn instant(&self, wall: Wall) -> i64 {
        let mut naive: NaiveDateTime = wall.naive_utc();
        // A gap is at most a day (a zone that changed its date line); walk past it.
        for _ in 0..=(2 * 24 * 60) {
            if let Some(t) = self.earliest(naive) {
                return t;
            }
            naive += Duration::minutes(1);
        }
        wall.timestamp_millis()
    }

    /// The last firing at or before `at`.
    fn at_or_before(&self, at: Wall) -> Option<Wall> {
        self.expr
            .after(&(at + Duration::seconds(1)))
            .next_back()
            .filter(|f| *f <= at)
            .or_else(|| self.expr.after(&at).next_back())
    }

    /// The first firing strictly after `at`.
    fn after(&self, at: Wall) -> Option<Wall> {
        self.expr.after(&at).next()
    }

    /// The window of `every` firings, counted from the firing `anchor`, that holds `at`.
    fn stretched(&self, every: u32, anchor: Wall, at: Wall) -> Option<(Wall, Wall)> {
        let step = |from: Wall, n: u32, forward: bool| -> Option<Wall> {
            let mut it = self.expr.after(&from);
            let mut last = from;
            for _ in 0..n {
                last = if forward { it.next()? } else { it.next_back()? };
            }
            Some(last)
        };
        let mut start = anchor;
        let mut walked = 0;
        if at >= anchor {
            loop {
                let end = step(start, every, true)?;
                if at < end {
                    return Some((start, end));
                }
                start = end;
                walked += every;
                if walked > MAX_WALK {
                    return None;
                }
            }
        }
        loop {
            let begin = step(start, every, false)?;
            if at >= begin {
                return Some((begin, start));
            }
            start = begin;
            walked += every;
            if walked > MAX_WALK {
                return None;
            }
        }
    }

    /// A schedule's rules beyond parsing: it fires, at least an hour apart (checked over
    /// its next 400 firings from a year that has both clock changes), and a window of
    /// several firings has an anchor that is a firing, with firings a day apart at least.
    fn check(&self, c: &Cron) -> Result<(), DomainError> {
        let from = self.wall(1_767_225_600_000); // 2026-01-01T00:00:00Z
        let firings: Vec<i64> = self
            .expr
            .after(&from)
            .take(400)
            .map(|w| self.instant(w))
            .collect();
        if firings.len() < 2 {
            return Err(DomainError::invalid("schedules.cron", "never fires twice"));
        }
        let min_gap = firings.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(0);
        // A firing the clock skips moves to the gap's end, where the next may be too.
        let gaps_ok = firings
            .windows(2)
            .all(|w| w[1] - w[0] >= MIN_GAP_MS || w[1] == w[0]);
        if !gaps_ok {
            return Err(DomainError::invalid(
                "schedules.cron",
                "must fire at most hourly (its windows would be shorter than an hour)",
            ));
        }
        if !(1..=MAX_EVERY).contains(&c.every) {
            return Err(DomainError::invalid(
                "schedules.every",
                format!("must be 1 to {MAX_EVERY}"),
            ));
        }
        match (c.every, c.anchor) {
            (1, None) => Ok(()),
            (1, Some(_)) => Err(DomainError::invalid(
                "schedules.anchor",
                "only with every greater than 1",
            )),
            (_, None) => Err(DomainError::invalid(
                "schedules.anchor",
                "is required with every greater than 1: a firing that starts a window",
            )),
            (_, Some(anchor)) => {
                if min_gap < 23 * 3_600_000 {
                    return Err(DomainError::invalid(
                        "schedules.every",
                        "greater than 1 needs firings at least a day apart",
                    ));
                }
                let wall = self.wall(anchor);
                if !self.expr.includes(wall) || self.instant(wall) != anchor {
                    return Err(DomainError::invalid(
                        "schedules.anchor",
                        "must be a firing of the cron in its time zone",
                    ));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests;
