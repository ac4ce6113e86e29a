//! Exact decimal scores (issue 38, in progress; docs/decimals.md): a board may declare
//! `decimals` (0 to 6), and its scores are then decimal numbers with at most that many
//! places, kept as integers scaled by 10^decimals (83.417 on a board of 3 decimals is
//! 83417). Every rule of scores (the ±(2^53-1) range, SUM's overflow) applies to the
//! scaled integer, so nothing downstream changes and nothing is ever a float.
//!
//! [`parse`] reads a score from its decimal text, exactly: a JSON number as the client
//! wrote it, or a string. More places than the board keeps is refused (never rounded);
//! trailing zeros are not places (`1.50` on a board of 1 decimal is `1.5`). [`format()`]
//! writes a scaled score back as that text, with exactly `decimals` places.

use crate::error::DomainError;
use crate::score::{MAX_ABS_SCORE, Score};

/// The most places a board may keep.
pub const MAX_DECIMALS: u8 = 6;

/// How many decimal places a board keeps (0 to [`MAX_DECIMALS`]; 0: integer scores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Decimals(u8);

impl Decimals {
    pub fn new(field: &'static str, places: u8) -> Result<Self, DomainError> {
        if places > MAX_DECIMALS {
            return Err(DomainError::invalid(
                field,
                format!("must be 0 to {MAX_DECIMALS}"),
            ));
        }
        Ok(Self(places))
    }

    pub fn get(self) -> u8 {
        self.0
    }
}

/// Reads `text` (a JSON number's literal, or a string's content: `-`, digits without a
/// leading zero, optional `.` and digits, optional exponent) as a score of a board with
/// `d` places: the value scaled by 10^d, exactly. Refuses malformed text (400), more
/// places than `d` keeps ([`DomainError::TooManyDecimals`], 422) and a scaled value
/// outside ±(2^53-1) ([`DomainError::ScoreOutOfRange`], 422).
pub fn parse(field: &'static str, text: &str, d: Decimals) -> Result<Score, DomainError> {
    let malformed = || DomainError::invalid(field, "must be a decimal number");
    let out_of_range = || DomainError::ScoreOutOfRange {
        field,
        value: text.to_owned(),
    };
    let (negative, rest) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(at) => (&rest[..at], Some(&rest[at + 1..])),
        None => (rest, None),
    };
    let (int, frac) = match mantissa.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int) || (int.len() > 1 && int.starts_with('0')) || frac.is_some_and(|f| !digits(f)) {
        return Err(malformed());
    }
    let zero = format!("{int}{}", frac.unwrap_or_default())
        .bytes()
        .all(|b| b == b'0');
    let exponent: i64 = match exponent {
        None => 0,
        Some(e) => {
            let unsigned = e.strip_prefix(['+', '-']).unwrap_or(e);
            if !digits(unsigned) {
                return Err(malformed());
            }
            if zero {
                return Ok(Score::ZERO);
            }
            // Beyond this no score of either sign is in range or has few enough places.
            if unsigned.len() > 4 {
                return Err(match e.starts_with('-') {
                    true => too_many(field, d),
                    false => out_of_range(),
                });
            }
            e.parse().map_err(|_| malformed())?
        }
    };
    // The value is `all` × 10^shift: the digits without the point, and where it goes.
    let frac = frac.unwrap_or_default();
    let all = format!("{int}{frac}");
    let shift = exponent - frac.len() as i64 + i64::from(d.get());
    let all = all.trim_start_matches('0');
    let scaled_digits = if shift >= 0 {
        if all.is_empty() {
            String::new()
        } else {
            format!("{all}{}", "0".repeat(shift.min(20) as usize))
        }
    } else {
        let cut = (-shift) as usize;
        let (kept, dropped) = all.split_at(all.len().saturating_sub(cut));
        if dropped.bytes().any(|b| b != b'0') {
            return Err(too_many(field, d));
        }
        kept.to_owned()
    };
    // At most 16 digits fit under 2^53; longer text is out of range before it is parsed.
    if scaled_digits.len() > 16 {
        return Err(out_of_range());
    }
    let magnitude: i64 = match scaled_digits.is_empty() {
        true => 0,
        false => scaled_digits.parse().map_err(|_| out_of_range())?,
    };
    if magnitude > MAX_ABS_SCORE {
        return Err(out_of_range());
    }
    Score::new(field, if negative { -magnitude } else { magnitude })
}

fn too_many(field: &'static str, d: Decimals) -> DomainError {
    DomainError::TooManyDecimals {
        field,
        allowed: d.get(),
    }
}

/// A scaled score as decimal text with exactly `d` places (`83.417`, `-0.050`, `12`).
pub fn format(score: Score, d: Decimals) -> String {
    let places = usize::from(d.get());
    let value = score.get();
    if places == 0 {
        return value.to_string();
    }
    let digits = format!("{:0>width$}", value.unsigned_abs(), width = places + 1);
    let (int, frac) = digits.split_at(digits.len() - places);
    let sign = if value < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(n: u8) -> Decimals {
        Decimals::new("decimals", n).unwrap()
    }

    fn scaled(text: &str, places: u8) -> Result<i64, DomainError> {
        parse("new_score", text, d(places)).map(Score::get)
    }

    #[test]
    fn decimal_text_is_read_exactly_as_a_scaled_integer() {
        assert_eq!(scaled("83.417", 3).unwrap(), 83_417);
        assert_eq!(scaled("83.4", 3).unwrap(), 83_400);
        assert_eq!(scaled("83", 3).unwrap(), 83_000);
        assert_eq!(scaled("-0.05", 2).unwrap(), -5);
        assert_eq!(scaled("0", 6).unwrap(), 0);
        assert_eq!(scaled("-0.0", 1).unwrap(), 0);
        // Trailing zeros are not places; exponents are read exactly.
        assert_eq!(scaled("1.50", 1).unwrap(), 15);
        assert_eq!(scaled("8.3417e1", 3).unwrap(), 83_417);
        assert_eq!(scaled("83417E-3", 3).unwrap(), 83_417);
        assert_eq!(scaled("1e+2", 0).unwrap(), 100);
        assert_eq!(scaled("12", 0).unwrap(), 12);
    }

    #[test]
    fn the_exact_range_holds_on_the_scaled_value_at_every_scale() {
        for places in 0..=MAX_DECIMALS {
            let top = format(Score::new("s", MAX_ABS_SCORE).unwrap(), d(places));
            assert_eq!(scaled(&top, places).unwrap(), MAX_ABS_SCORE, "{top}");
            assert_eq!(scaled(&format!("-{top}"), places).unwrap(), -MAX_ABS_SCORE);
            // One unit of the last place more is out of range, not rounded.
            let over = format!("{}2", &top[..top.len() - 1]);
            assert!(
                matches!(
                    scaled(&over, places),
                    Err(DomainError::ScoreOutOfRange { .. })
                ),
                "{over} at {places}"
            );
        }
        assert!(matches!(
            scaled("1e400", 0),
            Err(DomainError::ScoreOutOfRange { .. })
        ));
        assert!(matches!(
            scaled("123456789012345678901234567890", 0),
            Err(DomainError::ScoreOutOfRange { .. })
        ));
    }

    #[test]
    fn more_places_than_the_board_keeps_are_refused_never_rounded() {
        for (text, places) in [("83.4171", 3), ("0.5", 0), ("1e-7", 6), ("1.05", 1)] {
            assert!(
                matches!(
                    scaled(text, places),
                    Err(DomainError::TooManyDecimals { allowed, .. }) if allowed == places
                ),
                "{text} at {places}"
            );
        }
        assert!(matches!(
            scaled("1e-99999", 2),
            Err(DomainError::TooManyDecimals { .. })
        ));
        assert_eq!(scaled("0e-99999", 2).unwrap(), 0);
    }

    #[test]
    fn malformed_text_is_refused_as_invalid() {
        for text in [
            "", "-", ".5", "5.", "01", "1.2.3", "1e", "1e+", "0x10", " 1", "1 ", "+1", "NaN",
            "Infinity", "1_000", "١",
        ] {
            assert!(
                matches!(scaled(text, 3), Err(DomainError::Invalid { .. })),
                "{text:?}"
            );
        }
        assert!(Decimals::new("decimals", 7).is_err());
    }

    #[test]
    fn a_scaled_score_formats_with_exactly_the_boards_places_and_reads_back() {
        let cases = [
            (83_417, 3, "83.417"),
            (-5, 2, "-0.05"),
            (0, 2, "0.00"),
            (1_200, 0, "1200"),
            (-1, 6, "-0.000001"),
        ];
        for (value, places, text) in cases {
            let s = Score::new("s", value).unwrap();
            assert_eq!(format(s, d(places)), text);
            assert_eq!(scaled(text, places).unwrap(), value);
        }
    }
}
