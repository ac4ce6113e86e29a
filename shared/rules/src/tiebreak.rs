//! Tie-break columns (docs/tiebreaks.md): a board may declare up to three
//! integer columns, each `ASC` (lower ranks first) or `DESC` (higher ranks first),
//! compared in order after the score and before reached-at. A racing game ranks by lap
//! time, then by fewest collisions; a puzzle game by stars, then by fewest moves.
//!
//! A result's column values (`subscores`) are kept below the API in one encoded form,
//! [`Ties`]: per column 17 decimal digits whose byte order is the column's order
//! (`value + 2^53` for `ASC`, `2^53 - value` for `DESC`; every value within
//! ±(2^53-1) fits). Concatenated, the byte order of two encodings is the order of the
//! whole tuple, so the rank index and DynamoDB's rank order take the ties as a prefix of
//! the sorted-set member and of the sort key (`order::RankKey`), and nothing below the
//! API needs the columns to order a board. [`Columns`] turns values into ties and back
//! at the edge; SUM ([`Columns::add`]) is the one rule that adds values.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::score::{MAX_ABS_SCORE, Score};

/// The most tie-break columns a board may declare.
pub const MAX_COLUMNS: usize = 3;
/// Digits of one column in [`Ties`]: `2^54 - 1` has 17.
pub const WIDTH: usize = 17;
const OFFSET: i64 = 1 << 53;

/// Which way a column ranks: `ASC`, lower values first (fewest collisions), or `DESC`,
/// higher values first (most stars). Independent of the board's own direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ColumnOrder {
    #[default]
    Asc,
    Desc,
}

impl ColumnOrder {
    /// The column's digits for `value` (within ±(2^53-1)): lower digits rank first.
    fn encode(self, value: i64) -> i64 {
        match self {
            Self::Asc => value + OFFSET,
            Self::Desc => OFFSET - value,
        }
    }

    /// The value back from its digits.
    fn decode(self, digits: i64) -> i64 {
        match self {
            Self::Asc => digits - OFFSET,
            Self::Desc => OFFSET - digits,
        }
    }
}

/// A board's tie-break columns, in the order they are compared: 0 to [`MAX_COLUMNS`]
/// orders. Fixed at creation (part of the board's settings), so stored ties always
/// mean one tuple. Written as a JSON array of `ASC`/`DESC`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Columns {
    orders: [ColumnOrder; MAX_COLUMNS],
    len: u8,
}

impl Columns {
    /// No columns: ties break by reached-at, then player id, as on every board before.
    pub const NONE: Self = Self {
        orders: [ColumnOrder::Asc; MAX_COLUMNS],
        len: 0,
    };

    /// Columns of these orders; more than [`MAX_COLUMNS`] is refused naming `tiebreaks`.
    pub fn new(orders: &[ColumnOrder]) -> Result<Self, DomainError> {
        if orders.len() > MAX_COLUMNS {
            return Err(DomainError::invalid(
                "tiebreaks",
                format!("at most {MAX_COLUMNS} columns"),
            ));
        }
        let mut out = Self::NONE;
        out.orders[..orders.len()].copy_from_slice(orders);
        out.len = orders.len() as u8;
        Ok(out)
    }

    /// The columns a create body asks for (`tiebreaks`: an array of `"ASC"`/`"DESC"`,
    /// absent or null for none); anything else is refused naming the field.
    pub fn asked(raw: Option<&serde_json::Value>) -> Result<Self, DomainError> {
        let items = match raw {
            None | Some(serde_json::Value::Null) => return Ok(Self::NONE),
            Some(serde_json::Value::Array(items)) => items,
            Some(_) => {
                return Err(DomainError::invalid(
                    "tiebreaks",
                    "must be an array of \"ASC\" or \"DESC\"",
                ));
            }
        };
        let orders = items
            .iter()
            .map(|v| match v.as_str() {
                Some("ASC") => Ok(ColumnOrder::Asc),
                Some("DESC") => Ok(ColumnOrder::Desc),
                _ => Err(DomainError::invalid(
                    "tiebreaks",
                    "each column must be \"ASC\" or \"DESC\"",
                )),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::new(&orders)
    }

    /// The columns' orders.
    pub fn orders(&self) -> &[ColumnOrder] {
        &self.orders[..usize::from(self.len)]
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A result's `subscores` as ties on this board: exactly one value per column
    /// ([`DomainError::SubscoresMismatch`] otherwise, 422: the request is well formed,
    /// the board's settings refuse it).
    pub fn encode(&self, values: &[Score]) -> Result<Ties, DomainError> {
        if values.len() != self.len() {
            return Err(DomainError::SubscoresMismatch {
                expected: self.len(),
                got: values.len(),
            });
        }
        Ok(self.encode_values(values.iter().map(|v| v.get())))
    }

    fn encode_values(&self, values: impl Iterator<Item = i64>) -> Ties {
        let mut out = String::with_capacity(self.len() * WIDTH);
        for (order, v) in self.orders().iter().zip(values) {
            out.push_str(&format!("{:0WIDTH$}", order.encode(v)));
        }
        Ties(out)
    }

    /// The values of `ties` (as [`Columns::encode`] wrote them on this board); `None`
    /// when they are not this board's (another column count).
    pub fn values(&self, ties: &Ties) -> Option<Vec<i64>> {
        if ties.columns() != self.len() {
            return None;
        }
        self.orders()
            .iter()
            .enumerate()
            .map(|(i, order)| {
                let digits: i64 = ties.0[i * WIDTH..(i + 1) * WIDTH].parse().ok()?;
                Some(order.decode(digits))
            })
            .collect()
    }

    /// What a row shows: the values on a board with columns, nothing on one without.
    pub fn shown(&self, ties: &Ties) -> Option<Vec<i64>> {
        if self.is_empty() {
            return None;
        }
        self.values(ties)
    }

    /// SUM's fold: each column's total, refused like the score's total when one leaves
    /// ±(2^53-1) ([`DomainError::ScoreOutOfRange`]).
    pub fn add(&self, a: &Ties, b: &Ties) -> Result<Ties, DomainError> {
        let (Some(a), Some(b)) = (self.values(a), self.values(b)) else {
            return Err(DomainError::SubscoresMismatch {
                expected: self.len(),
                got: b.columns(),
            });
        };
        let sums = a
            .iter()
            .zip(&b)
            .map(|(x, y)| Score::new("subscores total", x + y).map(Score::get))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(self.encode_values(sums.into_iter()))
    }
}

impl Serialize for Columns {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.orders().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Columns {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let orders = Vec::<ColumnOrder>::deserialize(d)?;
        Self::new(&orders).map_err(serde::de::Error::custom)
    }
}

/// A standing's tie-break values in their encoded form (see the module docs): empty on
/// a board without columns. Byte order is rank order among equal scores.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Ties(String);

impl Ties {
    /// No columns.
    pub const fn none() -> Self {
        Self(String::new())
    }

    /// Ties read back from storage (a sorted-set member, a sort key, an item): whole
    /// columns of digits within range; `None` otherwise.
    pub fn stored(text: &str) -> Option<Self> {
        if !text.len().is_multiple_of(WIDTH) || text.len() > MAX_COLUMNS * WIDTH {
            return None;
        }
        let max = 2 * MAX_ABS_SCORE + 1;
        let whole = text.as_bytes().chunks(WIDTH).all(|c| {
            c.iter().all(u8::is_ascii_digit)
                && std::str::from_utf8(c)
                    .ok()
                    .and_then(|d| d.parse::<i64>().ok())
                    .is_some_and(|d| (1..=max).contains(&d))
        });
        whole.then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many columns these ties hold.
    pub fn columns(&self) -> usize {
        self.0.len() / WIDTH
    }
}

/// A result's `subscores` as the client sent them: an array of at most
/// [`MAX_COLUMNS`] integers within ±(2^53-1), checked before the board is known (400
/// naming the field, 422 out of range); their count is the board's to judge
/// ([`Columns::encode`]). Absent or null: none.
pub fn read_subscores(raw: Option<&serde_json::Value>) -> Result<Vec<Score>, DomainError> {
    let items = match raw {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Array(items)) => items,
        Some(_) => {
            return Err(DomainError::invalid(
                "subscores",
                "must be an array of integers",
            ));
        }
    };
    if items.len() > MAX_COLUMNS {
        return Err(DomainError::invalid(
            "subscores",
            format!("at most {MAX_COLUMNS} values"),
        ));
    }
    items
        .iter()
        .map(|v| match v {
            serde_json::Value::Number(n) => Score::from_json("subscores", n),
            _ => Err(DomainError::invalid(
                "subscores",
                "must be an array of integers",
            )),
        })
        .collect()
}

#[cfg(test)]
mod tests;
