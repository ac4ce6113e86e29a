//! Exact decimal scores (docs/decimals.md): a board may declare
//! `decimals` (0 to 6), and its scores are then decimal numbers with at most that many
//! places, kept as integers scaled by 10^decimals (83.417 on a board of 3 decimals is
//! 83417). Every rule of scores (the ±(2^53-1) range, SUM's overflow) applies to the
//! scaled integer, so nothing downstream changes and nothing is ever a float.
//!
//! [`parse`] reads a score from its decimal text, exactly: a JSON number as the client
//! wrote it, or a string. More places than the board keeps is refused (never rounded);
//! trailing zeros are not places (`1.50` on a board of 1 decimal is `1.5`). [`format()`]
//! writes a scaled score back as that text, with exactly `decimals` places; [`Shown`]
//! (`decimal/shown.rs`) is a score as a reply writes it.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::score::{MAX_ABS_SCORE, Score};
use crate::tiebreak::Columns;

mod shown;
pub use shown::Shown;

/// The most places a board may keep.
pub const MAX_DECIMALS: u8 = 6;

/// How many decimal places a board keeps (0 to [`MAX_DECIMALS`]; 0: integer scores).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(try_from = "u8", into = "u8")]
pub struct Decimals(u8);

impl TryFrom<u8> for Decimals {
    type Error = DomainError;

    fn try_from(places: u8) -> Result<Self, DomainError> {
        Self::new("decimals", places)
    }
}

impl From<Decimals> for u8 {
    fn from(d: Decimals) -> u8 {
        d.0
    }
}

/// How replies and events write a board's decimal scores: JSON numbers with exactly the
/// board's places (the text is exact; a client that reads numbers as doubles keeps 15
/// significant digits), or decimal strings (exact in every client). Integer boards
/// always write integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Style {
    #[default]
    Number,
    String,
}

/// A board's scores: their places and how they are written, and the tie-break
/// columns that follow the score in its order (docs/tiebreaks.md), whose values every
/// row shows beside the score. Fixed at creation, so a stored integer (and stored ties)
/// always mean one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ScoreFormat {
    #[serde(default)]
    pub decimals: Decimals,
    #[serde(default)]
    pub style: Style,
    #[serde(default, skip_serializing_if = "Columns::is_empty")]
    pub tiebreaks: Columns,
}

impl ScoreFormat {
    /// The format a create body asks for: `decimals` (default 0), `score_format`
    /// (default `NUMBER`; an integer board writes integers whatever it says, but keeps
    /// it as part of its settings) and `tiebreaks` (default none; [`Columns::asked`]).
    pub fn asked(
        decimals: Option<i64>,
        style: Option<Style>,
        tiebreaks: Option<&serde_json::Value>,
    ) -> Result<Self, DomainError> {
        let places = decimals.unwrap_or(0);
        let decimals = u8::try_from(places)
            .map_err(|_| DomainError::invalid("decimals", format!("must be 0 to {MAX_DECIMALS}")))
            .and_then(|p| Decimals::new("decimals", p))?;
        Ok(Self {
            decimals,
            style: style.unwrap_or_default(),
            tiebreaks: Columns::asked(tiebreaks)?,
        })
    }

    /// Today's integer boards without tie-break columns, stored without the setting.
    pub fn is_integer(&self) -> bool {
        *self == Self::default()
    }

    /// `score` as this board writes it.
    pub fn show(self, score: Score) -> Shown {
        self.show_scaled(score.get())
    }

    /// A scaled amount that need not be a score (a difference of two) as this board
    /// writes it.
    pub fn show_scaled(self, value: i64) -> Shown {
        Shown {
            value,
            format: self,
        }
    }
}

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

/// A score as a client wrote it: exact decimal text, not yet scaled to a board.
/// [`Amount::read`] checks its form (400 naming the field if malformed), and
/// [`Amount::scaled`] reads it at a board's places once the board is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Amount {
    field: &'static str,
    text: String,
}

impl Amount {
    /// Reads a score from a body's field as written: a JSON number's literal or a
    /// string's content (`raw` is the field's JSON text, see docs/decimals.md).
    pub fn read(
        field: &'static str,
        raw: &serde_json::value::RawValue,
    ) -> Result<Self, DomainError> {
        let json = raw.get();
        let text = match json.starts_with('"') {
            true => serde_json::from_str::<String>(json).map_err(|_| malformed(field))?,
            false if json.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) => {
                json.to_owned()
            }
            false => {
                return Err(DomainError::invalid(
                    field,
                    "must be a number or a decimal string",
                ));
            }
        };
        Self::new(field, text)
    }

    /// A score from a parsed JSON value (the stream mappings, whose records are read
    /// whole): a string exactly, a number as the shortest text of its double, which is
    /// what the client wrote whenever it had at most 15 significant digits.
    pub fn from_value(field: &'static str, value: &serde_json::Value) -> Result<Self, DomainError> {
        match value {
            serde_json::Value::String(s) => Self::new(field, s.clone()),
            serde_json::Value::Number(n) => Self::new(field, n.to_string()),
            _ => Err(DomainError::invalid(
                field,
                "must be a number or a decimal string",
            )),
        }
    }

    fn new(field: &'static str, text: String) -> Result<Self, DomainError> {
        match parse(field, &text, Decimals(MAX_DECIMALS)) {
            Err(e @ DomainError::Invalid { .. }) => Err(e),
            // Places and range depend on the board: `scaled` checks them.
            _ => Ok(Self { field, text }),
        }
    }

    /// A whole-number score (what the service itself submits).
    pub fn whole(field: &'static str, score: Score) -> Self {
        Self {
            field,
            text: score.get().to_string(),
        }
    }

    /// The score on a board of `d` places (see [`parse`]).
    pub fn scaled(&self, d: Decimals) -> Result<Score, DomainError> {
        parse(self.field, &self.text, d)
    }

    /// The field it came from, for errors about it.
    pub fn field(&self) -> &'static str {
        self.field
    }
}

/// Reads `text` (a JSON number's literal, or a string's content: `-`, digits without a
/// leading zero, optional `.` and digits, optional exponent) as a score of a board with
/// `d` places: the value scaled by 10^d, exactly. Refuses malformed text (400), more
/// places than `d` keeps ([`DomainError::TooManyDecimals`], 422) and a scaled value
/// outside ±(2^53-1) ([`DomainError::ScoreOutOfRange`], 422).
pub fn parse(field: &'static str, text: &str, d: Decimals) -> Result<Score, DomainError> {
    let malformed = || malformed(field);
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

fn malformed(field: &'static str) -> DomainError {
    DomainError::invalid(field, "must be a decimal number")
}

fn too_many(field: &'static str, d: Decimals) -> DomainError {
    DomainError::TooManyDecimals {
        field,
        allowed: d.get(),
    }
}

/// A scaled value as decimal text with exactly `d` places (`83.417`, `-0.050`, `12`).
pub fn format(value: i64, d: Decimals) -> String {
    let places = usize::from(d.get());
    if places == 0 {
        return value.to_string();
    }
    let digits = format!("{:0>width$}", value.unsigned_abs(), width = places + 1);
    let (int, frac) = digits.split_at(digits.len() - places);
    let sign = if value < 0 { "-" } else { "" };
    format!("{sign}{int}.{frac}")
}

#[cfg(test)]
mod tests;
