//! Tournaments (docs/tournaments.md): a definition's rules, and how a join's seat number
//! becomes a place in a cohort. Every check refuses with the field named.

use serde::{Deserialize, Serialize};

use crate::board::{Board, BoardStatus, BoardWindow, Policy, dense_unless_asked};
use crate::decimal::ScoreFormat;
use crate::error::DomainError;
use crate::ids::LeaderboardId;
use crate::league::League;
use crate::profile::text;
use crate::time::MAX_TS_MS;
use crate::window::{Period, TimeWindow, parse_name, window_of};

/// The smallest and largest cohort a definition may ask for.
pub const MIN_COHORT: u32 = 2;
pub const MAX_COHORT: u32 = 1_000;
/// The most players an occurrence may take.
pub const MAX_PLAYERS: u32 = 10_000_000;
/// Cohorts that fill at once (see [`Seating`]).
pub const OPEN_COHORTS: u32 = 4;
/// A league's tier `k` seats its players from seat `k × TIER_SEATS` and numbers its
/// cohorts from `k × TIER_COHORTS`, so that a seat or a cohort number says its tier
/// (a tournament without tiers is all tier 0: seats and cohorts from 0).
pub const TIER_SEATS: u64 = 100_000_000;
pub const TIER_COHORTS: u64 = 10_000_000;
const MAX_TITLE_CHARS: usize = 80;
const MAX_DESCRIPTION_CHARS: usize = 1_000;
use crate::ids::MAX_SLUG_LEN as MAX_ID_LEN;
/// The longest grace a definition may give late results, in seconds (a day).
pub const MAX_GRACE_SECONDS: u32 = 86_400;

/// When a tournament's occurrences run: once, `[start, end)` in ms since the epoch, or
/// once per window of a family period (`DAILY`, `WEEKLY`, `MONTHLY`); never both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Schedule {
    #[serde(
        default,
        deserialize_with = "instant",
        skip_serializing_if = "Option::is_none"
    )]
    pub start: Option<i64>,
    #[serde(
        default,
        deserialize_with = "instant",
        skip_serializing_if = "Option::is_none"
    )]
    pub end: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
}

/// A tournament id as a request names it (`field`: where): 1-64 of `A-Z a-z 0-9 _ -`.
pub use crate::ids::parse_slug as parse_id;

/// A history scope: a family's (`GLOBAL` or a region), a tournament occurrence's board's
/// (`t:{tournament}`) or a cohort's (`t:{tournament}:c{n}`).
pub fn history_scope(raw: &str) -> Result<String, DomainError> {
    let Some(rest) = raw.strip_prefix("t:") else {
        return parse_name("scope", raw);
    };
    let (id, cohort) = match rest.split_once(':') {
        Some((id, c)) => (id, Some(c)),
        None => (rest, None),
    };
    let id_ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let cohort_ok = cohort.is_none_or(|c| {
        c.strip_prefix('c').is_some_and(|n| {
            !n.is_empty() && n.len() <= 10 && n.bytes().all(|b| b.is_ascii_digit())
        })
    });
    if id_ok && cohort_ok {
        Ok(raw.to_owned())
    } else {
        Err(DomainError::invalid(
            "scope",
            "must be GLOBAL, a region, t:{tournament} or t:{tournament}:c{n}",
        ))
    }
}

/// A schedule's moment as the API takes it: RFC 3339, or ms since the epoch (any
/// integer here: [`Tournament::validated`] bounds both, so what it stored reads back).
fn instant<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Option::<serde_json::Value>::deserialize(d)?;
    v.map(|v| match v.as_i64() {
        Some(ms) => Ok(ms),
        None => crate::time::parse_ts("schedule", &v).map_err(serde::de::Error::custom),
    })
    .transpose()
}

/// One occurrence of a tournament: `once` or its window's key (`2026-11-25`,
/// `2026-W48`, `2026-11`), and `[start, end)` in ms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub key: String,
    pub start: i64,
    pub end: i64,
    /// The window's period; a one-off occurrence's window is a `SEASON` keyed `once`.
    pub period: Period,
}

impl Occurrence {
    /// The occurrence whose boards have window `w` (the inverse of [`Self::window`]);
    /// none for a window without a key, start and end.
    pub fn of(w: &TimeWindow) -> Option<Self> {
        Some(Self {
            key: w.key.clone()?,
            start: w.start?,
            end: w.end?,
            period: w.period,
        })
    }

    /// The time window of the occurrence's boards.
    pub fn window(&self) -> TimeWindow {
        TimeWindow {
            period: self.period,
            key: Some(self.key.clone()),
            start: Some(self.start),
            end: Some(self.end),
        }
    }
}

/// Why no occurrence runs at a moment (a one-off tournament's): not yet, or no more.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRunning {
    NotStarted { starts_at: i64 },
    Ended { ended_at: i64 },
}

impl Schedule {
    /// The occurrence running at `now_ms`, for a schedule as [`Tournament::validated`]
    /// leaves it. A recurring schedule always has one: the window of its period that
    /// holds the moment, in UTC.
    pub fn occurrence_at(&self, now_ms: i64) -> Result<Occurrence, NotRunning> {
        match (self.start, self.end, self.period) {
            (Some(start), Some(_), None) if now_ms < start => {
                Err(NotRunning::NotStarted { starts_at: start })
            }
            (Some(_), Some(end), None) if now_ms >= end => Err(NotRunning::Ended { ended_at: end }),
            (Some(start), Some(end), None) => Ok(Occurrence {
                key: "once".into(),
                start,
                end,
                period: Period::Season,
            }),
            (_, _, period) => {
                let period = period.unwrap_or(Period::Daily);
                let w = window_of(period, None, now_ms)
                    .expect("a daily, weekly or monthly window always exists");
                Ok(Occurrence {
                    key: w.key.unwrap_or_default(),
                    start: w.start.unwrap_or_default(),
                    end: w.end.unwrap_or_default(),
                    period,
                })
            }
        }
    }

    fn checked(self) -> Result<Self, DomainError> {
        let bad = |why: &str| Err(DomainError::invalid("schedule", why));
        let within = |t: Option<i64>| t.is_none_or(|t| (0..=MAX_TS_MS).contains(&t));
        if !within(self.start) || !within(self.end) {
            return bad("start and end must be from 1970 to 9999 (0 to 253402300799999 ms)");
        }
        match (self.start, self.end, self.period) {
            (Some(start), Some(end), None) if end <= start => bad("end must be after start"),
            (Some(_), Some(_), None) => Ok(self),
            (None, None, Some(Period::Daily | Period::Weekly | Period::Monthly)) => Ok(self),
            (None, None, Some(_)) => bad("a recurring tournament runs DAILY, WEEKLY or MONTHLY"),
            _ => bad("is either start and end, or a period"),
        }
    }
}

/// A tournament's definition, as stored once checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tournament {
    pub tournament_id: String,
    pub game: String,
    pub mode: String,
    #[serde(default)]
    pub policy: Policy,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    pub schedule: Schedule,
    #[serde(default = "joined_unless_said")]
    pub join_required: bool,
    #[serde(default)]
    pub max_players: Option<u32>,
    #[serde(default)]
    pub max_attempts: Option<u32>,
    #[serde(default)]
    pub cohort_size: Option<u32>,
    /// How joins are dealt into cohorts: `FILL` fills one cohort before the next (a new
    /// definition's unless it says), `SPREAD` deals consecutive joins over
    /// [`OPEN_COHORTS`] at once (a definition stored before the setting: its running
    /// occurrences keep their arithmetic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_seating: Option<CohortSeating>,
    /// Seconds after an occurrence's end during which results of matches that ended
    /// inside it are still taken (as a family window's grace).
    #[serde(default = "default_grace_seconds")]
    pub grace_seconds: u32,
    /// Tiers, with promotion and demotion decided at each occurrence's seal
    /// (docs/leagues.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<League>,
    /// What each occurrence's (or cohort's) places earn when it seals (docs/rewards.md);
    /// a league's are its tiers' instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<crate::reward::RewardTable>,
}

fn joined_unless_said() -> bool {
    true
}

fn default_grace_seconds() -> u32 {
    300
}

impl Tournament {
    /// Checks every field; the text fields come back in NFC.
    pub fn validated(mut self) -> Result<Self, DomainError> {
        parse_id("tournament_id", &self.tournament_id)?;
        self.game = parse_name("game", &self.game)?;
        self.mode = parse_name("mode", &self.mode)?;
        self.title = text("title", &self.title, MAX_TITLE_CHARS)?;
        self.description = (self.description)
            .filter(|d| !d.is_empty())
            .map(|d| text("description", &d, MAX_DESCRIPTION_CHARS))
            .transpose()?;
        self.category = (self.category)
            .map(|c| parse_name("category", &c))
            .transpose()?;
        self.schedule = self.schedule.checked()?;
        let within = |field: &'static str, v: Option<u32>, lo: u32, hi: u32| match v {
            Some(n) if !(lo..=hi).contains(&n) => {
                Err(DomainError::invalid(field, format!("must be {lo} to {hi}")))
            }
            _ => Ok(()),
        };
        within("max_players", self.max_players, 1, MAX_PLAYERS)?;
        within("max_attempts", self.max_attempts, 1, u32::MAX)?;
        within("cohort_size", self.cohort_size, MIN_COHORT, MAX_COHORT)?;
        within(
            "grace_seconds",
            Some(self.grace_seconds),
            0,
            MAX_GRACE_SECONDS,
        )?;
        if let Some(league) = self.league.take() {
            if self.cohort_size.is_none() {
                return Err(DomainError::invalid(
                    "league",
                    "a league settles cohorts: set cohort_size",
                ));
            }
            if self.schedule.period.is_none() {
                return Err(DomainError::invalid(
                    "league",
                    "a league recurs: its schedule is a period (DAILY, WEEKLY or MONTHLY)",
                ));
            }
            self.league = Some(league.validated()?);
        }
        self.rewards = crate::reward::beside_league(self.rewards.take(), self.league.is_some())?;
        Ok(self)
    }

    /// The name of the league tier a seat is in (none without a league).
    pub fn tier_name(&self, seat: u64) -> Option<String> {
        let league = self.league.as_ref()?;
        Some(league.tier_id((seat / TIER_SEATS) as usize).to_owned())
    }

    /// The occurrence before `occ` of a recurring tournament (none for a one-off one).
    pub fn previous(&self, occ: &Occurrence) -> Option<Occurrence> {
        self.schedule.period?;
        self.schedule.occurrence_at(occ.start - 1).ok()
    }

    /// Where the seat numbers of `tier` come from (the hints' and the table counter's
    /// key): the occurrence's board for tier 0, `{board}:s{tier}` above it.
    pub fn seat_pool(&self, occ: &Occurrence, tier: usize) -> LeaderboardId {
        match tier {
            0 => self.board_id(occ),
            k => LeaderboardId::parse(&format!("{}:s{k}", self.board_id(occ)))
                .expect("a board id and a tier number make a board id"),
        }
    }

    /// The board of an occurrence (`cohort: None`) or of one of its cohorts, as the
    /// first join creates it: the tournament's policy, the occurrence's window and
    /// grace, and the tournament named, so that results reach it only through the
    /// tournament (which counts attempts). Its scope is `t:{tournament}` (a cohort's
    /// `t:{tournament}:c{n}`), so its history rows name the tournament and the cohort.
    pub fn board(&self, occ: &Occurrence, cohort: Option<u64>, now: i64) -> Board {
        let (leaderboard_id, scope) = match cohort {
            Some(n) => (
                self.cohort_board_id(occ, n),
                format!("t:{}:c{n}", self.tournament_id),
            ),
            None => (self.board_id(occ), format!("t:{}", self.tournament_id)),
        };
        Board {
            leaderboard_id,
            policy: self.policy,
            status: BoardStatus::Active,
            created_at: now,
            window: Some(BoardWindow {
                rolling_ms: None,
                game: self.game.clone(),
                mode: self.mode.clone(),
                scope,
                window: occ.window(),
                grace_ms: i64::from(self.grace_seconds) * 1000,
            }),
            sealed_at: None,
            dense_ranks: dense_unless_asked(),
            // A cohort is small and its seal reads it whole; the occurrence's board keeps
            // its rank order in DynamoDB, as a weekly family board does.
            rank_index: cohort.is_none(),
            tournament: Some(self.tournament_id.clone()),
            // A tournament's scores are integers (docs/decimals.md).
            scores: ScoreFormat::default(),
            // A tournament's results are judged by its attempts, not held (docs/integrity.md).
            integrity: None,
            reset: None,
            rewards: None,
        }
    }

    /// The board of an occurrence: every result of it, across cohorts
    /// (`t:{tournament}:{occurrence}`).
    pub fn board_id(&self, occ: &Occurrence) -> LeaderboardId {
        LeaderboardId::parse(&format!("t:{}:{}", self.tournament_id, occ.key))
            .expect("a checked tournament id and a window key make a board id")
    }

    /// The board of one cohort of an occurrence (`t:{tournament}:{occurrence}:c{n}`).
    pub fn cohort_board_id(&self, occ: &Occurrence, cohort: u64) -> LeaderboardId {
        LeaderboardId::parse(&format!("{}:c{cohort}", self.board_id(occ)))
            .expect("a board id and a cohort number make a board id")
    }

    /// How the occurrence's seats become cohorts, if it has cohorts: one cohort at a
    /// time (`FILL`), or [`OPEN_COHORTS`] at once (`SPREAD`, and a definition stored
    /// before the setting), fewer when `max_players` fills fewer (3 players in cohorts
    /// of 2 sit in 2 cohorts, not 3).
    pub fn seating(&self) -> Option<Seating> {
        let most = match self.cohort_seating {
            Some(CohortSeating::Fill) => 1,
            Some(CohortSeating::Spread) | None => OPEN_COHORTS,
        };
        self.cohort_size.map(|size| {
            let needed = self.max_players.map_or(most, |m| m.div_ceil(size));
            Seating {
                size,
                open: needed.clamp(1, most),
            }
        })
    }
}

/// A player's membership of an occurrence, as the join stored it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// The seat the join took (0-based, in the order joins took them).
    pub seat: u64,
    /// The cohort the seat sits in (none for a tournament without cohorts).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort: Option<u64>,
    /// When the join happened, ms.
    pub joined_at: i64,
    /// Results counted so far (each match once).
    #[serde(default)]
    pub attempts: u32,
}

pub use seating::{CohortSeating, Place, Seating, tier_of_cohort, tier_seats};

mod seating;

#[cfg(test)]
mod tests;
