//! Schema mappings: how one event source (a game-server pod's topic, a stream) names the
//! fields of a match result, as configuration rather than code per pod. A mapping turns
//! one raw event of its source into the canonical match result (`POST /scores`' body),
//! which then goes through the same validation and idempotent ingest as that route.
//!
//! ```json
//! {"source": "pod-17",
//!  "fields": {"player_id": "/user/id", "match_id": "/match", "score": "/result/seconds",
//!             "game": {"const": "g1"}, "mode": "/queue", "region": "/dc",
//!             "event_ts": "/at"},
//!  "score_scale": {"multiply": 1000, "divide": 1},
//!  "timestamp": "epoch_seconds"}
//! ```
//!
//! A field comes from a JSON pointer (RFC 6901) into the event or is a constant. Ids may
//! be strings or integers in the event. The score may be an integer, a decimal or a
//! numeric string; it is multiplied, then divided, and must come out a whole number
//! (a score that would need rounding is refused, never rounded). The idempotency key of
//! an event is its source and its match id: the canonical `match_id` is
//! `{source}:{match}`, so a redelivered event replays, and two sources cannot collide.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error::DomainError;
use crate::ids::MAX_ID_LEN;
use crate::match_result::MatchBody;
use crate::score::MAX_ABS_SCORE;
use crate::window::parse_name;

/// Where one canonical field's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FieldSource {
    /// A JSON pointer into the event, e.g. `/user/id` (`""` is the whole event).
    Path(String),
    /// The same value for every event of the source.
    Const {
        #[serde(rename = "const")]
        value: String,
    },
}

/// The canonical fields and where each comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fields {
    pub player_id: FieldSource,
    pub match_id: FieldSource,
    pub score: FieldSource,
    pub game: FieldSource,
    pub mode: FieldSource,
    pub region: FieldSource,
    /// When absent, the event's time is when it is ingested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_ts: Option<FieldSource>,
    /// Where the result's metadata is (a JSON object of at most 512 bytes); when absent,
    /// or when the event has nothing there, the result carries none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<FieldSource>,
    /// Where each tie-break value is, one pointer per column of the family
    /// (docs/tiebreaks.md); absent for a family without columns.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscores: Vec<FieldSource>,
}

/// A score's units: the canonical score is `raw * multiply / divide`, exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreScale {
    #[serde(default = "one")]
    pub multiply: i64,
    #[serde(default = "one")]
    pub divide: i64,
}

fn one() -> i64 {
    1
}

impl Default for ScoreScale {
    fn default() -> Self {
        Self {
            multiply: 1,
            divide: 1,
        }
    }
}

/// How the event's time is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimestampFormat {
    /// RFC 3339 text (or integer ms, as `POST /scores` takes).
    #[default]
    Rfc3339,
    EpochMillis,
    EpochSeconds,
}

/// One source's mapping, as stored (validated, versioned).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mapping {
    /// The source's name: 1 to 32 of `[A-Za-z0-9_-]`.
    pub source: String,
    /// Set by the store: 1 for the first mapping of a source, then one more per change.
    #[serde(default)]
    pub version: u64,
    pub fields: Fields,
    #[serde(default)]
    pub score_scale: ScoreScale,
    #[serde(default)]
    pub timestamp: TimestampFormat,
}

/// Why an event could not be mapped: the field and the reason (what the dead-letter
/// destination records beside the raw event).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmappable {
    pub field: &'static str,
    pub reason: String,
}

impl std::fmt::Display for Unmappable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.reason)
    }
}

fn unmappable(field: &'static str, reason: impl Into<String>) -> Unmappable {
    Unmappable {
        field,
        reason: reason.into(),
    }
}

impl Mapping {
    /// Checks the mapping before it is stored: the source's name, every pointer's form,
    /// the constants the canonical fields would refuse, and the scale.
    pub fn validated(self) -> Result<Self, DomainError> {
        parse_name("source", &self.source)?;
        let f = &self.fields;
        let all = [
            ("fields.player_id", Some(&f.player_id)),
            ("fields.match_id", Some(&f.match_id)),
            ("fields.score", Some(&f.score)),
            ("fields.game", Some(&f.game)),
            ("fields.mode", Some(&f.mode)),
            ("fields.region", Some(&f.region)),
            ("fields.event_ts", f.event_ts.as_ref()),
            ("fields.metadata", f.metadata.as_ref()),
        ];
        for (name, source) in all {
            match source {
                Some(FieldSource::Path(p)) if !p.is_empty() && !p.starts_with('/') => {
                    return Err(DomainError::invalid(
                        name,
                        "a JSON pointer starts with / (or is empty for the whole event)",
                    ));
                }
                _ => {}
            }
        }
        for (name, source) in [
            ("fields.game", &f.game),
            ("fields.mode", &f.mode),
            ("fields.region", &f.region),
        ] {
            if let FieldSource::Const { value } = source {
                parse_name(name, value)?;
            }
        }
        for (name, source) in [
            ("fields.score", Some(&f.score)),
            ("fields.event_ts", f.event_ts.as_ref()),
            ("fields.metadata", f.metadata.as_ref()),
        ] {
            if let Some(FieldSource::Const { .. }) = source {
                return Err(DomainError::invalid(name, "must come from the event"));
            }
        }
        if f.subscores.len() > crate::tiebreak::MAX_COLUMNS {
            return Err(DomainError::invalid(
                "fields.subscores",
                format!("at most {} pointers", crate::tiebreak::MAX_COLUMNS),
            ));
        }
        for source in &f.subscores {
            match source {
                FieldSource::Path(p) if p.is_empty() || p.starts_with('/') => {}
                FieldSource::Path(_) => {
                    return Err(DomainError::invalid(
                        "fields.subscores",
                        "a JSON pointer starts with / (or is empty for the whole event)",
                    ));
                }
                FieldSource::Const { .. } => {
                    return Err(DomainError::invalid(
                        "fields.subscores",
                        "must come from the event",
                    ));
                }
            }
        }
        let s = self.score_scale;
        let whole = 1..=MAX_ABS_SCORE;
        if !whole.contains(&s.multiply) || !whole.contains(&s.divide) {
            return Err(DomainError::invalid(
                "score_scale",
                "multiply and divide must be from 1 to 2^53-1",
            ));
        }
        Ok(self)
    }

    /// The canonical match result of one raw event of this source.
    pub fn apply(&self, event: &Value) -> Result<MatchBody, Unmappable> {
        let f = &self.fields;
        let match_id = text(event, "match_id", &f.match_id)?;
        let key = format!("{}:{match_id}", self.source);
        if key.len() > MAX_ID_LEN {
            return Err(unmappable(
                "match_id",
                format!("with the source it is longer than {MAX_ID_LEN} characters"),
            ));
        }
        Ok(MatchBody {
            game: Some(text(event, "game", &f.game)?),
            mode: Some(text(event, "mode", &f.mode)?),
            region: Some(text(event, "region", &f.region)?),
            player_id: Some(text(event, "player_id", &f.player_id)?),
            match_id: Some(key),
            score: Some(self.score(event)?),
            event_ts: f
                .event_ts
                .as_ref()
                .map(|src| self.timestamp(event, src))
                .transpose()?,
            // Optional in the event: nothing there is no metadata (a stored mapping's
            // metadata is always a pointer, see `validated`).
            metadata: match &f.metadata {
                Some(FieldSource::Path(p)) => event.pointer(p).filter(|v| !v.is_null()).cloned(),
                Some(FieldSource::Const { .. }) | None => None,
            },
            subscores: self.subscores(event)?,
        })
    }

    /// The event's tie-break values, in the mapping's order (`None` when it maps none);
    /// each must be there (the canonical rules judge them as `POST /scores` does).
    fn subscores(&self, event: &Value) -> Result<Option<Value>, Unmappable> {
        if self.fields.subscores.is_empty() {
            return Ok(None);
        }
        let values = (self.fields.subscores.iter())
            .map(|src| value(event, "subscores", src))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Some(Value::Array(values)))
    }

    /// The event's score: its text unchanged when the mapping does not scale it (a
    /// decimal is read exactly at the family's places), else `raw * multiply /
    /// divide`, which must be whole.
    fn score(&self, event: &Value) -> Result<Box<RawValue>, Unmappable> {
        let raw = value(event, "score", &self.fields.score)?;
        let n = match raw {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.trim().to_owned(),
            _ => return Err(unmappable("score", "is not a number")),
        };
        let text = match self.score_scale == ScoreScale::default() {
            true => n,
            false => scale(&n, self.score_scale)
                .ok_or_else(|| unmappable("score", format!("{n} is not a number")))?
                .map_err(|why| unmappable("score", why))?
                .to_string(),
        };
        serde_json::to_string(&text)
            .ok()
            .and_then(|json| RawValue::from_string(json).ok())
            .ok_or_else(|| unmappable("score", "is not a number"))
    }

    fn timestamp(&self, event: &Value, src: &FieldSource) -> Result<Value, Unmappable> {
        let raw = value(event, "event_ts", src)?;
        let bad = |what: &str| unmappable("event_ts", format!("is not {what}"));
        Ok(match self.timestamp {
            TimestampFormat::Rfc3339 => raw,
            TimestampFormat::EpochMillis => {
                Value::from(whole(&raw).ok_or_else(|| bad("integer ms"))?)
            }
            TimestampFormat::EpochSeconds => {
                let s = whole(&raw).ok_or_else(|| bad("integer seconds"))?;
                Value::from(s.checked_mul(1000).ok_or_else(|| bad("a time"))?)
            }
        })
    }
}

/// The value a source names in the event (a constant is a string).
fn value(event: &Value, field: &'static str, src: &FieldSource) -> Result<Value, Unmappable> {
    match src {
        FieldSource::Const { value } => Ok(Value::String(value.clone())),
        FieldSource::Path(p) => event
            .pointer(p)
            .filter(|v| !v.is_null())
            .cloned()
            .ok_or_else(|| unmappable(field, format!("nothing at {p}"))),
    }
}

/// An id or name: a string, or an integer written as one.
fn text(event: &Value, field: &'static str, src: &FieldSource) -> Result<String, Unmappable> {
    match value(event, field, src)? {
        Value::String(s) => Ok(s),
        Value::Number(n) if n.is_i64() || n.is_u64() => Ok(n.to_string()),
        _ => Err(unmappable(field, "is not a string or an integer")),
    }
}

/// An integer, given as a JSON integer or integer text.
fn whole(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `text * multiply / divide` exactly, from decimal text (`12`, `-3.25`, `1e3`): `None`
/// if it is no number, `Err` if the result is not a whole number or does not fit.
fn scale(text: &str, s: ScoreScale) -> Option<Result<i64, String>> {
    let (mantissa, exponent) = match text.split_once(['e', 'E']) {
        Some((m, e)) => (m, e.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (sign, digits) = match mantissa.strip_prefix('-') {
        Some(rest) => (-1_i128, rest),
        None => (1, mantissa.strip_prefix('+').unwrap_or(mantissa)),
    };
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
        || int.len() + frac.len() > 30
    {
        return None;
    }
    // The value is `all digits * 10^(exponent - frac digits)`.
    let all: i128 = format!("{int}{frac}").parse().ok()?;
    let shift = exponent - frac.len() as i32;
    let too_big = || Err("does not fit a score".to_owned());
    let mut numerator = sign * all * i128::from(s.multiply);
    let mut denominator = i128::from(s.divide);
    if shift >= 0 {
        let Some(p) = 10_i128.checked_pow(shift as u32) else {
            return Some(too_big());
        };
        let Some(n) = numerator.checked_mul(p) else {
            return Some(too_big());
        };
        numerator = n;
    } else {
        let Some(p) = 10_i128.checked_pow((-shift) as u32) else {
            return Some(Err("has more decimals than any score unit".to_owned()));
        };
        denominator *= p;
    }
    if numerator % denominator != 0 {
        return Some(Err(format!(
            "{text} x {} / {} is not a whole number",
            s.multiply, s.divide
        )));
    }
    Some(i64::try_from(numerator / denominator).or_else(|_| too_big()))
}

#[cfg(test)]
mod tests;
