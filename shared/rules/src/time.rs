//! Wall-clock helpers: milliseconds since the Unix epoch, always UTC.

use chrono::{DateTime, SecondsFormat, Utc};

use crate::error::DomainError;

/// Now, in ms since the Unix epoch.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// Microseconds since the epoch, now.
pub fn now_us() -> i64 {
    Utc::now().timestamp_micros()
}

/// RFC 3339 with milliseconds and `Z`, e.g. `2026-11-22T02:33:05.123Z`.
pub fn rfc3339_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// The last millisecond RFC 3339 can write (9999-12-31T23:59:59.999Z): the most a
/// timestamp given as ms may be (openapi.yaml's `EventTime` and `Instant`).
pub const MAX_TS_MS: i64 = 253_402_300_799_999;

/// Reads a timestamp given as RFC 3339 text or as integer ms since the epoch (0 to
/// [`MAX_TS_MS`]).
pub fn parse_ts(field: &'static str, value: &serde_json::Value) -> Result<i64, DomainError> {
    let bad = || {
        DomainError::invalid(
            field,
            format!("must be RFC 3339 text or integer ms since the epoch (0 to {MAX_TS_MS})"),
        )
    };
    match value {
        serde_json::Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.timestamp_millis())
            .map_err(|_| bad()),
        serde_json::Value::Number(n) => n
            .as_i64()
            .filter(|ms| (0..=MAX_TS_MS).contains(ms))
            .ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Ms since the epoch of an RFC 3339 instant (tests' dates).
/// For tests (feature `test-util`).
#[cfg(any(test, feature = "test-util"))]
pub fn at(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .expect("an RFC 3339 instant")
        .timestamp_millis()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_timestamp_in_ms_is_one_rfc_3339_can_write() {
        use serde_json::json;
        let max = super::MAX_TS_MS;
        assert_eq!(super::rfc3339_ms(max), "9999-12-31T23:59:59.999Z");
        assert_eq!(super::parse_ts("t", &json!(max)).ok(), Some(max));
        assert_eq!(super::parse_ts("t", &json!(0)).ok(), Some(0));
        assert!(super::parse_ts("t", &json!(max + 1)).is_err());
        assert!(super::parse_ts("t", &json!(-1)).is_err());
        assert!(super::parse_ts("t", &json!(1.5)).is_err());
    }

    #[test]
    fn formats_with_milliseconds_in_utc() {
        assert_eq!(
            super::rfc3339_ms(1_763_778_785_123),
            "2025-11-22T02:33:05.123Z"
        );
    }
}
