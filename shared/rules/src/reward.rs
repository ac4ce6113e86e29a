//! Reward tables (docs/rewards.md): what a sealed window's places earn. One table type
//! serves a board, a family, a tournament and each tier of a league; [`RewardTable::
//! decide`] is a pure function of the sealed order and the table, so a seal run again
//! decides the same rewards.
//!
//! A range covers places `from_rank..=to_rank`, or the top `top_percent` of the
//! participants (rounded up, so the top 10% of 5 is place 1). A player earns the first
//! range, in the table's order, that covers their place, and one reward a window at
//! most. Places follow the table's `rank_mode`: `unique` (the default) gives tied
//! players the board's own order (who reached the score first), so a range's edge
//! falls between them; `competition` and `dense` give tied players one place, so a
//! tie at an edge earns every tied player the range.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::parse_slug;
use crate::order::RankMode;

/// The most ranges a table may have.
pub const MAX_RANGES: usize = 50;
/// The deepest place a table may reach: the sealed results keep the top 1,000.
pub const DEEPEST_PLACE: u64 = 1_000;
/// The most of one reward a place may earn.
pub const MAX_QUANTITY: u32 = 1_000_000;
/// How long an unclaimed reward waits, unless the table says.
pub const DEFAULT_EXPIRY_DAYS: u32 = 30;
/// The longest an unclaimed reward may wait.
pub const MAX_EXPIRY_DAYS: u32 = 365;

/// Places `from_rank..=to_rank`, or the top `top_percent` of the participants, earn
/// `quantity` of `reward` (an id the game's economy knows).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardRange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_rank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_rank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_percent: Option<u32>,
    pub reward: String,
    /// One unless said (and written only when more, so a league's ranges read back as
    /// they were written).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub quantity: u32,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl RewardRange {
    /// Whether the range covers `place` of `total` participants.
    pub fn covers(&self, place: u64, total: u64) -> bool {
        match (self.from_rank, self.to_rank, self.top_percent) {
            (Some(from), Some(to), _) => (from..=to).contains(&place),
            (_, _, Some(p)) => place <= (total * u64::from(p)).div_ceil(100),
            _ => false,
        }
    }

    /// The range's own rules; a refusal names `field`.
    fn check(&self, field: &'static str) -> Result<(), DomainError> {
        let bad = |why: String| Err(DomainError::invalid(field, why));
        match (self.from_rank, self.to_rank, self.top_percent) {
            (Some(from), Some(to), None) if from >= 1 && to >= from && to <= DEEPEST_PLACE => {}
            (None, None, Some(p)) if (1..=100).contains(&p) => {}
            _ => {
                return bad(format!(
                    "a range is from_rank 1 or more to a to_rank not below it and at most \
                     {DEEPEST_PLACE}, or top_percent (1 to 100)"
                ));
            }
        }
        if !(1..=MAX_QUANTITY).contains(&self.quantity) {
            return bad(format!("quantity is 1 to {MAX_QUANTITY}"));
        }
        parse_slug(field, &self.reward).map(|_| ())
    }
}

/// Checks a list of ranges (a table's, or a league tier's): at most [`MAX_RANGES`],
/// each valid, and rank ranges that do not overlap (percent ranges may nest: the first
/// that covers a place is the one earned).
pub fn check_ranges(field: &'static str, ranges: &[RewardRange]) -> Result<(), DomainError> {
    if ranges.len() > MAX_RANGES {
        return Err(DomainError::invalid(
            field,
            format!("at most {MAX_RANGES} ranges"),
        ));
    }
    for r in ranges {
        r.check(field)?;
    }
    let mut by_rank: Vec<(u64, u64)> = (ranges.iter())
        .filter_map(|r| Some((r.from_rank?, r.to_rank?)))
        .collect();
    by_rank.sort_unstable();
    if by_rank.windows(2).any(|w| w[0].1 >= w[1].0) {
        return Err(DomainError::invalid(field, "rank ranges do not overlap"));
    }
    Ok(())
}

/// The longest reward id: a sealed window's board id (a reset's archive's is its board's
/// and a suffix).
pub const MAX_REWARD_ID: usize = 160;

/// A reward's id as a path names it: 1 to 160 of `[A-Za-z0-9_.:-]`; a refusal names `id`.
pub fn parse_reward_id(raw: &str) -> Result<String, DomainError> {
    let ok = (1..=MAX_REWARD_ID).contains(&raw.len())
        && (raw.bytes()).all(|b| b.is_ascii_alphanumeric() || b"_.:-".contains(&b));
    if !ok {
        return Err(DomainError::invalid(
            "id",
            format!("must be 1-{MAX_REWARD_ID} of A-Z a-z 0-9 _ . : -"),
        ));
    }
    Ok(raw.to_owned())
}

/// A tournament's table, checked: none beside a league (whose tiers carry its rewards).
pub fn beside_league(
    table: Option<RewardTable>,
    league: bool,
) -> Result<Option<RewardTable>, DomainError> {
    match table {
        Some(_) if league => Err(DomainError::invalid(
            "rewards",
            "a league's rewards are its tiers' (league.tiers.rewards)",
        )),
        table => table.map(RewardTable::validated).transpose(),
    }
}

/// The first of `ranges` that covers `place` of `total`.
pub fn earned(ranges: &[RewardRange], place: u64, total: u64) -> Option<&RewardRange> {
    ranges.iter().find(|r| r.covers(place, total))
}

/// A board's, family's or tournament's reward table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardTable {
    pub ranges: Vec<RewardRange>,
    /// How tied players share places (module docs).
    #[serde(default)]
    pub rank_mode: RankMode,
    /// How long an unclaimed reward waits before it expires.
    #[serde(default = "default_expiry")]
    pub expires_after_days: u32,
}

fn default_expiry() -> u32 {
    DEFAULT_EXPIRY_DAYS
}

/// One place's reward, as [`RewardTable::decide`] gives it: the index of the place in
/// the sealed order, the place under the table's rank mode, and the range earned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Earned<'a> {
    pub index: usize,
    pub place: u64,
    pub range: &'a RewardRange,
}

impl RewardTable {
    /// The table a body asks for: `None` when absent or `null`; a refusal names its
    /// field under `rewards`.
    pub fn asked(body: Option<serde_json::Value>) -> Result<Option<Self>, DomainError> {
        match body {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(v) => (serde_json::from_value::<Self>(v))
                .map_err(|e| DomainError::invalid("rewards", e.to_string()))?
                .validated()
                .map(Some),
        }
    }

    /// Checks every rule; each refusal names its field under `rewards`.
    pub fn validated(self) -> Result<Self, DomainError> {
        if self.ranges.is_empty() {
            return Err(DomainError::invalid(
                "rewards.ranges",
                "must have 1 or more ranges",
            ));
        }
        check_ranges("rewards.ranges", &self.ranges)?;
        if !(1..=MAX_EXPIRY_DAYS).contains(&self.expires_after_days) {
            return Err(DomainError::invalid(
                "rewards.expires_after_days",
                format!("is 1 to {MAX_EXPIRY_DAYS}"),
            ));
        }
        Ok(self)
    }

    /// How long an unclaimed reward waits, in ms.
    pub fn expiry_ms(&self) -> i64 {
        i64::from(self.expires_after_days) * 86_400_000
    }

    /// What each place of a sealed window earns: `tied[i]` says whether place `i` of
    /// the sealed order (best first) has the same score as place `i - 1` (`tied[0]` is
    /// ignored), of `total` participants. Places past the table's ranges earn nothing.
    pub fn decide(&self, tied: &[bool], total: u64) -> Vec<Earned<'_>> {
        let mut out = Vec::new();
        let mut place = 0_u64;
        for (i, &tie) in tied.iter().enumerate() {
            let rank = i as u64 + 1;
            place = match self.rank_mode {
                RankMode::Unique => rank,
                _ if i > 0 && tie => place,
                RankMode::Competition => rank,
                RankMode::Dense => place + 1,
            };
            if let Some(range) = earned(&self.ranges, place, total) {
                out.push(Earned {
                    index: i,
                    place,
                    range,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
