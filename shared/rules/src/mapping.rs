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
mod tests {
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
}
