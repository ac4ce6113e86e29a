//! [`Shown`]: a score as a reply writes it, and read back (a kept view's rows).

use serde::{Deserialize, Serialize};

use super::{Decimals, MAX_DECIMALS, ScoreFormat, Style, format, parse};
use crate::error::DomainError;
use crate::score::MAX_ABS_SCORE;
use crate::tiebreak::Columns;

/// A score as a reply writes it: an integer on an integer board, else the decimal text
/// with exactly the board's places, as a JSON number or a string ([`Style`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shown {
    /// The scaled integer.
    pub value: i64,
    pub format: ScoreFormat,
}

impl Shown {
    /// The scaled integer.
    pub fn get(self) -> i64 {
        self.value
    }
}

/// Reads back what [`Serialize`] wrote: an integer; a string with the board's places,
/// exactly; a number with them, through a double (its places then are those of the
/// double's shortest text, at most [`MAX_DECIMALS`]: a stored live view's rows, the one
/// place this is read, only compare ranks and players).
impl<'de> Deserialize<'de> for Shown {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Written;
        impl serde::de::Visitor<'_> for Written {
            type Value = Shown;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a score: an integer, or a decimal number or string")
            }

            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Shown, E> {
                Ok(ScoreFormat::default().show_scaled(v))
            }

            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Shown, E> {
                i64::try_from(v)
                    .map(|v| self.visit_i64(v))
                    .map_err(E::custom)?
            }

            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Shown, E> {
                let places = usize::from(MAX_DECIMALS);
                let text = match v.to_string() {
                    t if t.split_once('.').is_some_and(|(_, f)| f.len() > places) => {
                        format!("{v:.places$}")
                    }
                    t => t,
                };
                read_back(&text, Style::Number).map_err(E::custom)
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Shown, E> {
                read_back(v, Style::String).map_err(E::custom)
            }
        }
        d.deserialize_any(Written)
    }
}

/// A score's decimal text at the places it shows. A number read through a double may
/// land a unit past the range's edge: it is taken as the edge.
fn read_back(text: &str, style: Style) -> Result<Shown, DomainError> {
    let places = text.split_once('.').map_or(0, |(_, frac)| frac.len());
    let decimals = Decimals::new("score", u8::try_from(places).unwrap_or(u8::MAX))?;
    let value = match parse("score", text, decimals) {
        Err(DomainError::ScoreOutOfRange { .. }) if style == Style::Number => {
            MAX_ABS_SCORE * if text.starts_with('-') { -1 } else { 1 }
        }
        read => read?.get(),
    };
    Ok(Shown {
        value,
        format: ScoreFormat {
            decimals,
            style,
            tiebreaks: Columns::NONE,
        },
    })
}

impl Serialize for Shown {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ScoreFormat {
            decimals, style, ..
        } = self.format;
        if decimals.get() == 0 {
            return s.serialize_i64(self.value);
        }
        let text = format(self.value, decimals);
        match style {
            Style::String => s.serialize_str(&text),
            // A number's literal exactly as written: never through a double.
            Style::Number => serde_json::value::RawValue::from_string(text)
                .map_err(serde::ser::Error::custom)?
                .serialize(s),
        }
    }
}
