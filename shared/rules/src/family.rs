//! Board families: a game and mode that declare their regions, periods, policy and grace
//! period once; a match result then lands on one board per (scope, period), where scope
//! is `GLOBAL` or the result's region. Board ids are
//! `{game}:{mode}:{scope}:{PERIOD}[:{window}]`, e.g. `g1:ranked:NA:DAILY:2026-11-22`.

use serde::{Deserialize, Serialize};

use crate::board::Policy;
use crate::decimal::ScoreFormat;
use crate::error::DomainError;
use crate::ids::LeaderboardId;
use crate::schedule::{Kind, MAX_SCHEDULES, Schedule, ScheduleId};
use crate::window::{GLOBAL, NoWindow, Period, Season, TimeWindow, parse_name, window_of};

/// The longest grace a family may give late results: a year (openapi.yaml).
pub const MAX_GRACE_MS: i64 = 365 * 86_400_000;

/// A board family's definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Family {
    pub game: String,
    pub mode: String,
    pub policy: Policy,
    pub regions: Vec<String>,
    pub periods: Vec<Period>,
    pub season: Option<Season>,
    /// How long after a window's end late results are still accepted, in ms.
    pub grace_ms: i64,
    /// Whether its boards keep dense ranks (see [`crate::board::Board::dense_ranks`]).
    #[serde(default = "crate::board::stored_without_the_setting")]
    pub dense_ranks: bool,
    /// The periods whose boards keep their rank order in DynamoDB (see
    /// [`crate::board::Board::rank_index`]); `None`, for a family stored before the
    /// setting existed, is all of them.
    #[serde(default)]
    pub rank_index_periods: Option<Vec<Period>>,
    /// Its boards' decimal places and how replies write their scores
    /// ([`crate::board::Board::scores`]).
    #[serde(default, skip_serializing_if = "ScoreFormat::is_integer")]
    pub scores: ScoreFormat,
    /// The family's own periods (`schedule`): crons in time zones and rolling windows,
    /// each counted like a period (`Period::Custom`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<Schedule>,
    /// How long before a window's end its `leaderboard.window.closing` event goes out, in
    /// ms (families stored before the setting: the default).
    #[serde(default = "default_closing_lead_ms")]
    pub closing_lead_ms: i64,
    /// Its boards' integrity rules (docs/integrity.md), copied to each when created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<crate::integrity::Integrity>,
    /// What its windows' places earn when they seal (docs/rewards.md): the family's table
    /// as it is at each seal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<crate::reward::RewardTable>,
}

/// The default lead of `window.closing`: 15 minutes.
pub fn default_closing_lead_ms() -> i64 {
    15 * 60_000
}

/// The lead's bounds: a minute to a week.
pub const CLOSING_LEAD_MS: std::ops::RangeInclusive<i64> = 60_000..=7 * 86_400_000;

impl Family {
    /// Checks names, periods and the season; sorts and dedups regions and periods so
    /// that the same settings always compare equal.
    pub fn validated(mut self) -> Result<Self, DomainError> {
        self.game = parse_name("game", &self.game)?;
        self.mode = parse_name("mode", &self.mode)?;
        for r in &self.regions {
            parse_name("regions", r)?;
            if r == GLOBAL {
                return Err(DomainError::invalid(
                    "regions",
                    "GLOBAL is implied and reserved",
                ));
            }
        }
        self.regions.sort();
        self.regions.dedup();
        self.periods.sort();
        self.periods.dedup();
        if self.periods.is_empty() {
            return Err(DomainError::invalid(
                "periods",
                "must name at least one period",
            ));
        }
        match (&self.season, self.periods.contains(&Period::Season)) {
            (None, true) => return Err(DomainError::invalid("season", "is required for SEASON")),
            (Some(s), _) => {
                parse_name("season.id", &s.id)?;
                if s.end <= s.start {
                    return Err(DomainError::invalid("season", "end must be after start"));
                }
            }
            (None, false) => {}
        }
        if self.periods.iter().any(|p| p.schedule().is_some()) {
            return Err(DomainError::invalid(
                "periods",
                "names the built-in periods; a family's own go in schedules",
            ));
        }
        if self.schedules.len() > MAX_SCHEDULES {
            return Err(DomainError::invalid(
                "schedules",
                format!("at most {MAX_SCHEDULES}"),
            ));
        }
        // Checked in the order asked, so a refusal names the schedule by its place.
        self.schedules = (self.schedules.into_iter().enumerate())
            .map(|(i, s)| s.validated().map_err(|e| e.in_item("schedules", i)))
            .collect::<Result<_, _>>()?;
        self.schedules.sort_by_key(|s| s.id);
        if self.schedules.windows(2).any(|w| w[0].id == w[1].id) {
            return Err(DomainError::invalid("schedules", "each id once"));
        }
        let all = self.all_periods();
        if let Some(ranked) = &mut self.rank_index_periods {
            ranked.sort();
            ranked.dedup();
            if let Some(p) = ranked.iter().find(|p| !all.contains(p)) {
                return Err(DomainError::invalid(
                    "rank_index_periods",
                    format!(
                        "names {}, which is not one of the family's periods",
                        p.as_str()
                    ),
                ));
            }
        }
        if !CLOSING_LEAD_MS.contains(&self.closing_lead_ms) {
            return Err(DomainError::invalid(
                "closing_lead_seconds",
                "must be from 60 (a minute) to 604800 (a week)",
            ));
        }
        if !(0..=MAX_GRACE_MS).contains(&self.grace_ms) {
            return Err(DomainError::invalid(
                "grace_seconds",
                format!("must be from 0 to {} (a year)", MAX_GRACE_MS / 1000),
            ));
        }
        Ok(self)
    }

    /// Every period a result counts in: the built-in ones, then the family's schedules.
    pub fn all_periods(&self) -> Vec<Period> {
        let own = self.schedules.iter().map(|s| Period::Custom(s.id));
        self.periods.iter().copied().chain(own).collect()
    }

    /// The family's schedule of that id.
    pub fn schedule(&self, id: ScheduleId) -> Option<&Schedule> {
        self.schedules.iter().find(|s| s.id == id)
    }

    /// The window of `period` that contains `ts_ms`: a built-in period's (in UTC), a
    /// cron schedule's (from its firing at or before to the next), or a rolling
    /// schedule's one board (which never closes).
    pub fn window_of(&self, period: Period, ts_ms: i64) -> Result<TimeWindow, NoWindow> {
        let Some(id) = period.schedule() else {
            return window_of(period, self.season.as_ref(), ts_ms);
        };
        match &self.schedule(id).ok_or(NoWindow::NoFiring)?.kind {
            Kind::Rolling { .. } => Ok(TimeWindow {
                period,
                key: None,
                start: None,
                end: None,
            }),
            Kind::Cron(c) => {
                let w = c.window_of(ts_ms).ok_or(NoWindow::NoFiring)?;
                Ok(TimeWindow {
                    period,
                    key: Some(w.key),
                    start: Some(w.start),
                    end: Some(w.end),
                })
            }
        }
    }

    /// Whether the boards of `period` keep their rank order in DynamoDB.
    pub fn rank_index(&self, period: Period) -> bool {
        self.rank_index_periods
            .as_ref()
            .is_none_or(|ranked| ranked.contains(&period))
    }

    /// The board id of one scope's window.
    pub fn board_id(&self, scope: &str, window: &TimeWindow) -> LeaderboardId {
        let mut id = format!(
            "{}:{}:{scope}:{}",
            self.game,
            self.mode,
            window.period.as_str()
        );
        if let Some(key) = &window.key {
            id.push(':');
            id.push_str(key);
        }
        // Every part is a validated name or a window key, so this always parses.
        LeaderboardId::parse(&id)
            .unwrap_or_else(|_| unreachable!("board id {id:?} from validated parts"))
    }

    /// The scopes a result from `region` counts in: GLOBAL, then the region.
    pub fn scopes<'a>(&'a self, region: &'a str) -> [&'a str; 2] {
        [GLOBAL, region]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::at;
    use crate::window::window_of;

    /// A family `g1` of `mode` with a best policy, no season or grace, keeping dense
    /// ranks, over `regions` and `periods`.
    fn family(mode: &str, regions: &[&str], periods: &[Period]) -> Family {
        Family {
            closing_lead_ms: crate::family::default_closing_lead_ms(),
            rewards: None,
            schedules: Vec::new(),
            game: "g1".into(),
            mode: mode.into(),
            policy: Policy::Best,
            regions: regions.iter().map(|r| (*r).to_owned()).collect(),
            periods: periods.to_vec(),
            season: None,
            grace_ms: 0,
            dense_ranks: true,
            rank_index_periods: None,
            scores: Default::default(),
            integrity: None,
        }
    }

    #[test]
    fn a_family_stored_before_dense_ranks_were_a_setting_keeps_them() {
        let stored = serde_json::json!({
            "game": "g1", "mode": "m", "policy": "BEST", "regions": [],
            "periods": ["ALL_TIME"], "season": null, "grace_ms": 0
        });
        let f: Family = serde_json::from_value(stored).unwrap();
        assert!(f.dense_ranks);
        assert!(
            f.rank_index(Period::AllTime),
            "and its rank order in DynamoDB"
        );
    }

    #[test]
    fn only_the_named_periods_keep_a_rank_order_and_only_the_familys_own_may_be_named() {
        let f = Family {
            dense_ranks: false,
            rank_index_periods: Some(vec![Period::AllTime, Period::AllTime]),
            ..family("m", &[], &[Period::Daily, Period::AllTime])
        };
        let v = f.clone().validated().unwrap();
        assert_eq!(v.rank_index_periods, Some(vec![Period::AllTime]));
        assert!(v.rank_index(Period::AllTime));
        assert!(!v.rank_index(Period::Daily));
        let weekly = Family {
            rank_index_periods: Some(vec![Period::Weekly]),
            ..f
        };
        let refused = weekly.validated().unwrap_err().to_string();
        assert!(
            refused.contains("rank_index_periods") && refused.contains("WEEKLY"),
            "{refused}"
        );
    }

    #[test]
    fn board_ids_follow_the_documented_shape() {
        let f = family("ranked", &["NA"], &[Period::Daily, Period::AllTime]);
        let day = window_of(Period::Daily, None, at("2026-11-22T12:00:00Z")).unwrap();
        assert_eq!(
            f.board_id("NA", &day).as_str(),
            "g1:ranked:NA:DAILY:2026-11-22"
        );
        let week = window_of(Period::Weekly, None, at("2026-11-22T12:00:00Z")).unwrap();
        assert_eq!(
            f.board_id(GLOBAL, &week).as_str(),
            "g1:ranked:GLOBAL:WEEKLY:2026-W47"
        );
        let all = window_of(Period::AllTime, None, 0).unwrap();
        assert_eq!(
            f.board_id(GLOBAL, &all).as_str(),
            "g1:ranked:GLOBAL:ALL_TIME"
        );
    }

    #[test]
    fn families_are_validated_and_normalised() {
        let periods = [Period::Daily, Period::AllTime, Period::Daily];
        let f = family("ranked", &["EU", "NA", "EU"], &periods);
        let v = f.clone().validated().unwrap();
        assert_eq!(v.regions, ["EU", "NA"]);
        assert_eq!(v.periods, [Period::AllTime, Period::Daily]);
        let bad = |f: Family| f.validated().is_err();
        assert!(bad(Family {
            game: "g:1".into(),
            ..f.clone()
        }));
        assert!(bad(Family {
            regions: vec!["GLOBAL".into()],
            ..f.clone()
        }));
        assert!(bad(Family {
            periods: vec![],
            ..f.clone()
        }));
        assert!(bad(Family {
            periods: vec![Period::Season],
            ..f.clone()
        }));
        assert!(bad(Family {
            grace_ms: -1,
            ..f.clone()
        }));
        assert!(bad(Family {
            grace_ms: MAX_GRACE_MS + 1000,
            ..f
        }));
    }
}
