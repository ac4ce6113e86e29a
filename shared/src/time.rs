//! Wall-clock helpers: milliseconds since the Unix epoch, always UTC.

use chrono::{DateTime, SecondsFormat, Utc};

/// Now, in ms since the Unix epoch.
pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

/// RFC 3339 with milliseconds and `Z`, e.g. `2026-11-22T02:33:05.123Z`.
pub fn rfc3339_ms(ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
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
