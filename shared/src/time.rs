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

/// Reads a timestamp given as RFC 3339 text or as integer ms since the epoch.
pub fn parse_ts(field: &'static str, value: &serde_json::Value) -> Result<i64, DomainError> {
    let bad = || DomainError::invalid(field, "must be RFC 3339 text or integer ms since the epoch");
    match value {
        serde_json::Value::String(s) => DateTime::parse_from_rfc3339(s)
            .map(|t| t.timestamp_millis())
            .map_err(|_| bad()),
        serde_json::Value::Number(n) => n.as_i64().filter(|ms| *ms >= 0).ok_or_else(bad),
        _ => Err(bad()),
    }
}

/// Ms since the epoch of an RFC 3339 instant (tests' dates).
#[cfg(test)]
pub(crate) fn at(rfc3339: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(rfc3339)
        .expect("an RFC 3339 instant")
        .timestamp_millis()
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_with_milliseconds_in_utc() {
        assert_eq!(
            super::rfc3339_ms(1_763_778_785_123),
            "2025-11-22T02:33:05.123Z"
        );
    }
}
