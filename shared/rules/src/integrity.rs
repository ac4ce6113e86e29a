//! Integrity rules: what makes a result suspicious enough to hold for an operator's
//! review instead of applying it (docs/integrity.md). A board (or a family, for each of
//! its boards) may carry them; a result that breaks one touches no standing until an
//! operator approves it.
//!
//! Each rule is judged from what the write already has in hand: the result, the
//! player's standing and receipts (the row it reads anyway), the board's current top
//! (read with the player's place, in the round trip the write already makes) and the
//! result's metadata. None costs a read of its own.

use serde::{Deserialize, Serialize};

use crate::decimal::{Amount, Decimals, ScoreFormat};
use crate::error::DomainError;
use crate::order::Direction;
use crate::policy::Policy;
use crate::score::Score;

/// The most results per minute the rate rule can count: the receipts a row keeps in
/// itself (`store::receipts::INLINE_RECEIPTS` in the service crate), so counting them
/// reads nothing more.
pub const MAX_PER_MINUTE: u32 = 4;

/// The metadata field a result's match duration is read from, in ms.
pub const DURATION_FIELD: &str = "duration_ms";

/// A board's integrity rules, as stored (scores scaled to the board's places).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// A result below this is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_score: Option<Score>,
    /// A result above this is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_score: Option<Score>,
    /// BEST, MIN and LATEST: the most one result may move the player's standing in the
    /// board's direction; SUM: the most one result may add.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gain: Option<Score>,
    /// At most this many results per player per minute on the board (1 to
    /// [`MAX_PER_MINUTE`]); the next one within the minute is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_minute: Option<u32>,
    /// A result whose standing would pass the board's current top by more than this
    /// factor, in hundredths (150: one and a half times the top).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_factor_pct: Option<u32>,
    /// ... or by more than this margin, in the board's units.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_margin: Option<Score>,
    /// A result whose metadata says its match lasted less than this (ms) is held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_duration_ms: Option<i64>,
    /// After this many of a player's results are rejected in a game, the player is
    /// banned from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ban_after_rejections: Option<u32>,
}

/// Which rule a held result broke: its stable code in replies, events and the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    ScoreRange,
    MinDuration,
    Rate,
    MaxGain,
    PastTop,
}

impl Rule {
    pub fn code(self) -> &'static str {
        match self {
            Self::ScoreRange => "score_range",
            Self::MinDuration => "min_duration",
            Self::Rate => "rate",
            Self::MaxGain => "max_gain",
            Self::PastTop => "past_top",
        }
    }

    pub fn parse(code: &str) -> Option<Self> {
        [
            Self::ScoreRange,
            Self::MinDuration,
            Self::Rate,
            Self::MaxGain,
            Self::PastTop,
        ]
        .into_iter()
        .find(|r| r.code() == code)
    }

    /// Whether the rule's figures are scores (written as the board writes them) rather
    /// than counts or milliseconds.
    pub fn in_score_units(self) -> bool {
        matches!(self, Self::ScoreRange | Self::MaxGain | Self::PastTop)
    }
}

/// What tripped a rule: the rule, the figure the result showed and the limit it
/// passed (in the board's units for scores, a count for the rate, ms for a duration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tripped {
    pub rule: Rule,
    pub value: i64,
    pub limit: i64,
}

/// What a rule set judges a result by, all of it already in the write's hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub policy: Policy,
    /// The result's score, at the board's places.
    pub score: Score,
    /// The player's standing before it.
    pub current: Option<Score>,
    /// The standing it would leave, when it changes it.
    pub next: Option<Score>,
    /// The player's results on the board in the minute before this one.
    pub recent: u32,
    /// The board's best score now, if known (an index that cannot say skips the rule).
    pub top: Option<Score>,
    /// The match's duration from the result's metadata, ms.
    pub duration_ms: Option<i64>,
}

impl Integrity {
    /// Whether any rule is set (a board without any never judges).
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// Whether judging needs the board's current top.
    pub fn needs_top(&self) -> bool {
        self.top_factor_pct.is_some() || self.top_margin.is_some()
    }

    /// The first rule `c` breaks, in the order: range, duration, rate, gain, top.
    pub fn judge(&self, c: &Candidate) -> Option<Tripped> {
        let trip = |rule, value, limit| Some(Tripped { rule, value, limit });
        let score = c.score.get();
        if let Some(min) = self.min_score.filter(|min| score < min.get()) {
            return trip(Rule::ScoreRange, score, min.get());
        }
        if let Some(max) = self.max_score.filter(|max| score > max.get()) {
            return trip(Rule::ScoreRange, score, max.get());
        }
        if let (Some(min), Some(d)) = (self.min_duration_ms, c.duration_ms)
            && d < min
        {
            return trip(Rule::MinDuration, d, min);
        }
        if let Some(max) = self.max_per_minute.filter(|max| c.recent >= *max) {
            return trip(Rule::Rate, i64::from(c.recent) + 1, i64::from(max));
        }
        if let Some(max) = self.max_gain
            && let Some(gain) = gain(c)
            && gain > max.get()
        {
            return trip(Rule::MaxGain, gain, max.get());
        }
        self.past_top(c)
    }

    /// The top rule: the standing the result leaves passes the current top by more
    /// than the margin, or (a positive top) by more than the factor.
    fn past_top(&self, c: &Candidate) -> Option<Tripped> {
        let (next, top) = (c.next?.get(), c.top?.get());
        let better = |a: i64, b: i64| match c.policy.direction() {
            Direction::Desc => a > b,
            Direction::Asc => a < b,
        };
        if !better(next, top) {
            return None;
        }
        let trip = |limit: i64| {
            Some(Tripped {
                rule: Rule::PastTop,
                value: next,
                limit,
            })
        };
        if let Some(margin) = self.top_margin {
            let limit = match c.policy.direction() {
                Direction::Desc => top.saturating_add(margin.get()),
                Direction::Asc => top.saturating_sub(margin.get()),
            };
            if better(next, limit) {
                return trip(limit);
            }
        }
        let pct = i128::from(self.top_factor_pct?);
        if top <= 0 {
            return None;
        }
        // Desc: next > top x pct/100; Asc (lower is better): next < top x 100/pct.
        let (n, t) = (i128::from(next), i128::from(top));
        let (past, limit) = match c.policy.direction() {
            Direction::Desc => (n * 100 > t * pct, t * pct / 100),
            Direction::Asc => (n * pct < t * 100, t * 100 / pct),
        };
        if past { trip(limit as i64) } else { None }
    }
}

/// How far one result moves the standing: SUM its own score; the others the new
/// standing's distance from the current one in the board's direction (a first result,
/// or one that changes nothing, has none).
fn gain(c: &Candidate) -> Option<i64> {
    match c.policy {
        Policy::Sum => Some(c.score.get()),
        Policy::Best | Policy::Latest => Some(c.next?.get() - c.current?.get()),
        Policy::Min => Some(c.current?.get() - c.next?.get()),
    }
}

/// The body's `integrity` object (docs/integrity.md), scores as the board writes them.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntegrityBody {
    pub min_score: Option<serde_json::Value>,
    pub max_score: Option<serde_json::Value>,
    pub max_gain: Option<serde_json::Value>,
    pub max_results_per_minute: Option<u32>,
    pub max_top_factor: Option<serde_json::Value>,
    pub max_top_margin: Option<serde_json::Value>,
    pub min_duration_seconds: Option<u32>,
    pub ban_after_rejections: Option<u32>,
}

impl IntegrityBody {
    /// Reads the body's `integrity` value; a refusal names the rule's field
    /// (`integrity.max_results_per_minute`), or `integrity` for a value that is no object.
    pub fn read(value: serde_json::Value) -> Result<Self, DomainError> {
        let serde_json::Value::Object(rules) = value else {
            return Err(DomainError::invalid("integrity", "must be an object"));
        };
        // Each rule read alone (every field is optional), so the first refused one is
        // named; an unknown one is named too.
        for (name, rule) in &rules {
            let alone: serde_json::Map<_, _> = [(name.clone(), rule.clone())].into_iter().collect();
            if let Err(e) = serde_json::from_value::<Self>(alone.into()) {
                return Err(DomainError::invalid(
                    format!("integrity.{name}"),
                    e.to_string(),
                ));
            }
        }
        serde_json::from_value(rules.into())
            .map_err(|e| DomainError::invalid("integrity", e.to_string()))
    }

    /// The rules on a board of `decimals` places; each refusal names its field.
    pub fn validate(self, decimals: Decimals) -> Result<Integrity, DomainError> {
        let score = |field: &'static str, v: Option<serde_json::Value>| {
            v.map(|v| Amount::from_value(field, &v)?.scaled(decimals))
                .transpose()
        };
        let refused = |field, reason: &str| DomainError::IntegrityRule {
            field,
            reason: reason.to_owned(),
        };
        let positive = |field: &'static str, s: Option<Score>| match s {
            Some(s) if s.get() <= 0 => Err(refused(field, "must be above 0")),
            s => Ok(s),
        };
        let min_score = score("integrity.min_score", self.min_score)?;
        let max_score = score("integrity.max_score", self.max_score)?;
        if let (Some(min), Some(max)) = (min_score, max_score)
            && min > max
        {
            return Err(refused(
                "integrity.max_score",
                "must not be below min_score",
            ));
        }
        let max_gain = positive(
            "integrity.max_gain",
            score("integrity.max_gain", self.max_gain)?,
        )?;
        let top_margin = positive(
            "integrity.max_top_margin",
            score("integrity.max_top_margin", self.max_top_margin)?,
        )?;
        let top_factor_pct = self
            .max_top_factor
            .map(|v| {
                let field = "integrity.max_top_factor";
                // The document's bounds are a 400, as any rule it refuses; within them,
                // more places than a factor keeps is a 422.
                if v.as_f64().is_some_and(|f| !(1.01..=1000.0).contains(&f)) {
                    return Err(DomainError::invalid(field, "must be from 1.01 to 1000"));
                }
                let why = "must be above 1 and at most 1000, with at most 2 decimal places";
                let pct = Amount::from_value(field, &v)?
                    .scaled(Decimals::new(field, 2)?)
                    .map_err(|_| refused(field, why))?
                    .get();
                match pct {
                    101..=100_000 => Ok(pct as u32),
                    _ => Err(refused(field, why)),
                }
            })
            .transpose()?;
        let bounded = |field: &'static str, v: Option<u32>, max: u32| match v {
            Some(n) if n == 0 || n > max => Err(DomainError::invalid(
                field,
                format!("must be from 1 to {max}"),
            )),
            v => Ok(v),
        };
        let max_per_minute = bounded(
            "integrity.max_results_per_minute",
            self.max_results_per_minute,
            MAX_PER_MINUTE,
        )?;
        let min_duration = bounded(
            "integrity.min_duration_seconds",
            self.min_duration_seconds,
            86_400,
        )?;
        let ban_after_rejections = bounded(
            "integrity.ban_after_rejections",
            self.ban_after_rejections,
            1_000,
        )?;
        Ok(Integrity {
            min_score,
            max_score,
            max_gain,
            max_per_minute,
            top_factor_pct,
            top_margin,
            min_duration_ms: min_duration.map(|s| i64::from(s) * 1000),
            ban_after_rejections,
        })
    }
}

impl Integrity {
    /// The rules as the API writes them (the body's names, scores as `scores` writes
    /// them).
    pub fn view(&self, scores: ScoreFormat) -> serde_json::Value {
        let mut v = serde_json::Map::new();
        let mut put = |k: &str, x: Option<serde_json::Value>| {
            if let Some(x) = x {
                v.insert(k.into(), x);
            }
        };
        let shown = |s: Option<Score>| s.map(|s| serde_json::json!(scores.show(s)));
        put("min_score", shown(self.min_score));
        put("max_score", shown(self.max_score));
        put("max_gain", shown(self.max_gain));
        put(
            "max_results_per_minute",
            self.max_per_minute.map(Into::into),
        );
        let factor = self.top_factor_pct.map(|p| f64::from(p) / 100.0);
        put("max_top_factor", factor.map(Into::into));
        put("max_top_margin", shown(self.top_margin));
        let seconds = self.min_duration_ms.map(|ms| ms / 1000);
        put("min_duration_seconds", seconds.map(Into::into));
        put(
            "ban_after_rejections",
            self.ban_after_rejections.map(Into::into),
        );
        v.into()
    }
}

#[cfg(test)]
mod tests;
