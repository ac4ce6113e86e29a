//! The rank order and its exact Redis encoding.
//!
//! Order (docs/api.md): score DESC (ASC for MIN boards), then the board's tie-break
//! columns (each in its own order), then reached-at ASC, then player id ASC. A sorted set orders by (double score ASC, member bytes ASC), so a standing is
//! stored as
//!
//! - zscore = `-score` on descending boards and `score` on ascending ones: an integer
//!   within ±(2^53-1), exact in a double, never mixed with anything else;
//! - member = the tie-break columns' digits (none on a board without columns; see
//!   `tiebreak`), reached-at as 13 zero-padded decimal digits (ms, good until year 2286),
//!   `:`, player id. Every member of a board has the same fixed-width prefix, so byte
//!   order equals (ties, reached-at, player) order; the first `:` ends the prefix.
//!
//! Reads always walk the set in ascending order (ZRANK / ZRANGE), never ZREV*, whose tie
//! order would reverse the tie-breakers.

use std::cmp::Ordering;

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::LeaderboardId;
use crate::score::Score;
use crate::tiebreak::Ties;

/// Digits of the reached-at prefix of a member.
pub const REACHED_AT_WIDTH: usize = 13;
const MAX_REACHED_AT: i64 = 9_999_999_999_999;
/// Digits of the score part of [`RankKey::sort_key`] (2^54 - 1 has 17).
const SORT_WIDTH: usize = 17;

/// Whether better scores are higher or lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Direction {
    Desc,
    Asc,
}

/// A board as the index and the rank-ordered reads walk it: which board, and which way
/// its scores rank. The two travel together to every read of a board's order, so they
/// are one argument, named at the call ([`BoardOrder::new`], `Board::order`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardOrder<'a> {
    pub lb: &'a LeaderboardId,
    pub dir: Direction,
}

impl<'a> BoardOrder<'a> {
    #[must_use]
    pub const fn new(lb: &'a LeaderboardId, dir: Direction) -> Self {
        Self { lb, dir }
    }
}

/// A standing's position key: everything the order looks at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankKey {
    pub score: Score,
    /// The tie-break columns' values, encoded (empty on a board without columns).
    pub ties: Ties,
    pub reached_at: i64,
    pub player: String,
}

impl RankKey {
    /// The sorted-set score for this key.
    pub fn zscore(&self, dir: Direction) -> i64 {
        match dir {
            Direction::Desc => -self.score.get(),
            Direction::Asc => self.score.get(),
        }
    }

    /// The sorted-set member for this key. Reached-at is clamped into the 13-digit range
    /// so that a clock error can never produce a wider, mis-ordered member.
    pub fn member(&self) -> String {
        let at = self.reached_at.clamp(0, MAX_REACHED_AT);
        format!(
            "{}{at:0width$}:{}",
            self.ties.as_str(),
            self.player,
            width = REACHED_AT_WIDTH
        )
    }

    /// Rebuilds a key from a sorted-set entry; `None` if the member is not ours.
    pub fn from_entry(dir: Direction, member: &str, zscore: f64) -> Option<Self> {
        let (prefix, player) = member.split_once(':')?;
        let (ties, at) = prefix.split_at_checked(prefix.len().checked_sub(REACHED_AT_WIDTH)?)?;
        let ties = Ties::stored(ties)?;
        if !at.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let reached_at = at.parse().ok()?;
        if zscore.fract() != 0.0 || zscore.abs() > crate::score::MAX_ABS_SCORE as f64 {
            return None;
        }
        let z = zscore as i64;
        let score = match dir {
            Direction::Desc => -z,
            Direction::Asc => z,
        };
        Some(Self {
            score: Score::new("zscore", score).ok()?,
            ties,
            reached_at,
            player: player.to_owned(),
        })
    }

    /// A string whose byte order is the rank order (DynamoDB's sort key for the degraded
    /// and history reads): 17 digits of `2^53 - score` (descending boards) or
    /// `score + 2^53` (ascending), `:`, the 13-digit reached-at, `:`, the player id.
    pub fn sort_key(&self, dir: Direction) -> String {
        let offset = 1_i64 << 53;
        let v = match dir {
            Direction::Desc => offset - self.score.get(),
            Direction::Asc => self.score.get() + offset,
        };
        format!("{v:0SORT_WIDTH$}:{}", self.member())
    }

    /// Reads a key back from [`RankKey::sort_key`].
    pub fn from_sort_key(dir: Direction, key: &str) -> Option<Self> {
        let (v, rest) = key.split_at_checked(SORT_WIDTH)?;
        let member = rest.strip_prefix(':')?;
        let v: i64 = v.parse().ok()?;
        let offset = 1_i64 << 53;
        let score = match dir {
            Direction::Desc => offset - v,
            Direction::Asc => v - offset,
        };
        // The zscore route does the member parsing and the range check.
        let zscore = match dir {
            Direction::Desc => -score,
            Direction::Asc => score,
        };
        Self::from_entry(dir, member, zscore as f64)
    }

    /// Whether two keys share a place under the shared rank modes: the same score and
    /// the same tie-break values (reached-at and the player id break only `unique`).
    pub fn ties_with(&self, other: &Self) -> bool {
        self.score == other.score && self.ties == other.ties
    }

    /// The documented order, written directly: the reference the encoding must match.
    pub fn cmp_in(&self, other: &Self, dir: Direction) -> Ordering {
        let by_score = match dir {
            Direction::Desc => other.score.cmp(&self.score),
            Direction::Asc => self.score.cmp(&other.score),
        };
        by_score
            .then_with(|| self.ties.cmp(&other.ties))
            .then(self.reached_at.cmp(&other.reached_at))
            .then_with(|| self.player.as_bytes().cmp(other.player.as_bytes()))
    }
}

/// How many of `entries` (in rank order) rank at or before `after`: the index of the
/// first entry after it.
pub fn position_after(entries: &[RankKey], dir: Direction, after: &RankKey) -> usize {
    entries.partition_point(|e| e.cmp_in(after, dir) != Ordering::Greater)
}

/// How many of `entries` (in rank order) rank strictly before `key`.
pub fn position_before(entries: &[RankKey], dir: Direction, key: &RankKey) -> usize {
    entries.partition_point(|e| e.cmp_in(key, dir) == Ordering::Less)
}

/// How tied scores share places (`rank_mode`). Every mode walks the same order; they
/// differ only in the number given to players on equal scores.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RankMode {
    /// Every player their own place, ties broken by reached-at then player id: 1, 2, 3, 4.
    #[default]
    Unique,
    /// Equal scores share the best of their places, the next score skips: 1, 2, 2, 4.
    /// A player's place is one more than the players with a strictly better score.
    Competition,
    /// Equal scores share a place, the next score takes the next: 1, 2, 2, 3. A player's
    /// place is one more than the distinct strictly better scores.
    Dense,
}

impl RankMode {
    /// Parses `rank_mode` (default `unique`).
    pub fn parse(raw: Option<&str>) -> Result<Self, DomainError> {
        match raw {
            None | Some("unique") => Ok(Self::Unique),
            Some("competition") => Ok(Self::Competition),
            Some("dense") => Ok(Self::Dense),
            Some(_) => Err(DomainError::invalid(
                "rank_mode",
                "must be unique, competition or dense",
            )),
        }
    }

    /// The name a query string and a reply use.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unique => "unique",
            Self::Competition => "competition",
            Self::Dense => "dense",
        }
    }
}

/// Where the first key of a slice of a board stands: its 1-based rank in the order and
/// its place under the rank mode asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Start {
    pub rank: u64,
    pub place: u64,
}

impl Start {
    /// The first key of the board.
    pub const TOP: Self = Self { rank: 1, place: 1 };
}

/// The places of consecutive `keys` (in rank order) under `mode`, the first one standing
/// at `start`: a key on the same score as the one before shares its place; otherwise
/// unique and competition places are the rank, dense places count up by one.
pub fn places(mode: RankMode, start: Start, keys: &[RankKey]) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let rank = start.rank + i as u64;
        let place = match (mode, out.last()) {
            (RankMode::Unique, _) => rank,
            (_, None) => start.place,
            (_, Some(&prev)) if keys[i - 1].ties_with(key) => prev,
            (RankMode::Competition, Some(_)) => rank,
            (RankMode::Dense, Some(&prev)) => prev + 1,
        };
        out.push(place);
    }
    out
}

/// The first key of `key`'s score and tie-break values in rank order (reached-at 0,
/// empty player id): the entries strictly before it are the ones strictly better.
pub fn tie_floor(key: &RankKey) -> RankKey {
    RankKey {
        score: key.score,
        ties: key.ties.clone(),
        reached_at: 0,
        player: String::new(),
    }
}

/// A key with reached-at 1, for the unit tests of the modules that order keys.
/// For tests (feature `test-util`).
#[cfg(any(test, feature = "test-util"))]
pub fn test_key(player: &str, score: i64) -> RankKey {
    RankKey {
        score: Score::new("s", score).expect("a test score in range"),
        ties: Ties::none(),
        reached_at: 1,
        player: player.into(),
    }
}

#[cfg(test)]
mod tests;
