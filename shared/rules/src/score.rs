//! Scores: integers within ±(2^53-1), the range that is exact in a Redis double, in Lua
//! and in JSON clients.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;

/// Largest accepted magnitude: 2^53-1.
pub const MAX_ABS_SCORE: i64 = (1 << 53) - 1;

/// A validated score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Score(i64);

impl Score {
    pub const ZERO: Self = Self(0);

    /// Accepts `value` when |value| <= 2^53-1; `field` names it in the error.
    pub fn new(field: &'static str, value: i64) -> Result<Self, DomainError> {
        if value.unsigned_abs() > MAX_ABS_SCORE as u64 {
            return Err(DomainError::ScoreOutOfRange {
                field,
                value: value.to_string(),
            });
        }
        Ok(Self(value))
    }

    /// Reads a JSON number: integers in range are accepted, fractions are refused as
    /// invalid (400), integers beyond the range (however written) as out of range (422).
    pub fn from_json(field: &'static str, n: &serde_json::Number) -> Result<Self, DomainError> {
        if let Some(v) = n.as_i64() {
            return Self::new(field, v);
        }
        if n.is_u64() {
            return Err(out_of_range(field, n));
        }
        match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.is_finite() => {
                if f.abs() > MAX_ABS_SCORE as f64 {
                    Err(out_of_range(field, n))
                } else {
                    Self::new(field, f as i64)
                }
            }
            _ => Err(DomainError::invalid(field, "must be an integer")),
        }
    }

    pub fn get(self) -> i64 {
        self.0
    }
}

fn out_of_range(field: &'static str, n: &serde_json::Number) -> DomainError {
    DomainError::ScoreOutOfRange {
        field,
        value: n.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_json(text: &str) -> Result<Score, DomainError> {
        let n: serde_json::Number = serde_json::from_str(text).unwrap();
        Score::from_json("new_score", &n)
    }

    #[test]
    fn accepts_the_exact_range_edges() {
        assert_eq!(from_json("9007199254740991").unwrap().get(), MAX_ABS_SCORE);
        assert_eq!(
            from_json("-9007199254740991").unwrap().get(),
            -MAX_ABS_SCORE
        );
        assert_eq!(from_json("12.0").unwrap().get(), 12);
    }

    #[test]
    fn refuses_one_past_the_edges_as_out_of_range() {
        for text in [
            "9007199254740992",
            "-9007199254740992",
            "18446744073709551615",
            "1e30",
        ] {
            assert!(
                matches!(from_json(text), Err(DomainError::ScoreOutOfRange { .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn refuses_fractions_as_invalid() {
        assert!(matches!(from_json("1.5"), Err(DomainError::Invalid { .. })));
    }
}
