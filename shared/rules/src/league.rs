//! Leagues (docs/leagues.md): a tournament's tiers, the zones that promote and
//! demote when an occurrence seals, and rewards by rank. [`League::settle`] is a pure
//! function of one sealed cohort's final order and the definition, so a seal can be run
//! again with the same outcome and a changed definition can be tried on a sealed
//! occurrence without storing anything.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::PlayerId;
use crate::reward::{RewardRange, check_ranges, earned};
use crate::window::parse_name;

/// The most tiers a league may have.
pub const MAX_TIERS: usize = 20;

/// What happens to a member who joined and posted no result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Absent {
    /// Keeps their tier (the default).
    #[default]
    Stay,
    /// Moves down a tier (none below the lowest).
    Demote,
}

/// The top (promotion) or bottom (demotion) part of a cohort: `count` places, or
/// `percent` of its members (rounded down); exactly one of the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<u32>,
}

impl Zone {
    /// How many places of a cohort of `members` the zone covers.
    pub fn places(&self, members: u64) -> u64 {
        match (self.count, self.percent) {
            (Some(n), _) => u64::from(n).min(members),
            (None, Some(p)) => members * u64::from(p) / 100,
            (None, None) => 0,
        }
    }

    fn checked(self, field: &'static str) -> Result<Self, DomainError> {
        match (self.count, self.percent) {
            (Some(n), None) if n >= 1 => Ok(self),
            (None, Some(p)) if (1..=100).contains(&p) => Ok(self),
            _ => Err(DomainError::invalid(
                field,
                "a zone is either count (at least 1) or percent (1 to 100)",
            )),
        }
    }
}

/// One tier: its id, its zones (none at the ends: no promotion from the top tier, no
/// demotion from the lowest) and its rewards.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tier {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub promote: Option<Zone>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub demote: Option<Zone>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rewards: Vec<RewardRange>,
}

/// A league: tiers from the lowest up, the tier new players start in (the lowest
/// unless named), and what happens to members without a result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct League {
    pub tiers: Vec<Tier>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_tier: Option<String>,
    #[serde(default)]
    pub absent: Absent,
}

/// One member's outcome of a sealed cohort.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settled {
    /// Absent once the player was erased (the outcome itself stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<PlayerId>,
    /// The final place in the cohort; `None` for a member without a result.
    pub rank: Option<u64>,
    /// Tier indexes, 0 the lowest.
    pub tier_before: usize,
    pub tier_after: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
}

impl League {
    /// Checks every rule; each refusal names its field.
    pub fn validated(self) -> Result<Self, DomainError> {
        let n = self.tiers.len();
        if n == 0 || n > MAX_TIERS {
            return Err(DomainError::invalid(
                "league.tiers",
                format!("must be 1 to {MAX_TIERS} tiers"),
            ));
        }
        let mut ids = BTreeSet::new();
        for (i, tier) in self.tiers.iter().enumerate() {
            let fresh = ids.insert(tier.id.as_str());
            check_tier(tier, fresh, i, n).map_err(|e| e.in_item("league.tiers", i))?;
        }
        if let Some(start) = &self.start_tier
            && !ids.contains(start.as_str())
        {
            return Err(DomainError::invalid("league.start_tier", "names no tier"));
        }
        Ok(self)
    }

    /// The id of tier `i` (the top tier's past the top).
    pub fn tier_id(&self, i: usize) -> &str {
        &self.tiers[i.min(self.tiers.len() - 1)].id
    }

    /// The index of the tier named `id`.
    pub fn tier_index(&self, id: &str) -> Option<usize> {
        self.tiers.iter().position(|t| t.id == id)
    }

    /// The tier a player without one starts in.
    pub fn start(&self) -> usize {
        (self.start_tier.as_ref())
            .and_then(|s| self.tiers.iter().position(|t| &t.id == s))
            .unwrap_or(0)
    }

    /// The outcome of one sealed cohort of tier `tier`: `ranked` in final order (rank 1
    /// first, the board's order, so equal scores are already ordered by who reached them
    /// first) and the members without a result. The promotion zone is the top of the
    /// ranked members; the demotion zone the bottom of all members (those without a
    /// result last), never overlapping the promotion zone. A member without a result
    /// never promotes and earns no reward; outside the demotion zone they stay or demote
    /// as [`League::absent`] says. A ranked member erased since the seal (`None`) keeps
    /// their place, unnamed.
    pub fn settle(
        &self,
        tier: usize,
        ranked: &[Option<PlayerId>],
        absent: &[PlayerId],
    ) -> Vec<Settled> {
        let top = self.tiers.len().saturating_sub(1);
        let tier = tier.min(top);
        let t = &self.tiers[tier];
        let members = (ranked.len() + absent.len()) as u64;
        let promoted = match t.promote {
            Some(z) if tier < top => z.places(members).min(ranked.len() as u64),
            _ => 0,
        };
        let demoted = match t.demote {
            Some(z) if tier > 0 => z.places(members).min(members - promoted),
            _ => 0,
        };
        let first_demoted = members - demoted;
        let players = (ranked.iter().cloned()).chain(absent.iter().cloned().map(Some));
        (players.zip(0_u64..))
            .map(|(player, i)| {
                let rank = (i < ranked.len() as u64).then_some(i + 1);
                let tier_after = if i < promoted {
                    tier + 1
                } else if i >= first_demoted || (rank.is_none() && self.absent == Absent::Demote) {
                    tier.saturating_sub(1)
                } else {
                    tier
                };
                Settled {
                    player_id: player,
                    rank,
                    tier_before: tier,
                    tier_after,
                    reward: rank
                        .and_then(|r| earned(&t.rewards, r, members))
                        .map(|r| r.reward.clone()),
                }
            })
            .collect()
    }
}

/// Changes a player's league standing keeps (the oldest go first).
pub const MAX_CHANGES: usize = 100;

/// What one seal decided for one player: the occurrence and cohort, their final rank
/// (none without a result), their tier before and after (the same when they stayed) and
/// their reward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TierChange {
    pub occurrence: String,
    pub cohort: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    pub tier_before: String,
    pub tier_after: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
    /// When the cohort was sealed, ms since the epoch.
    pub settled_at: i64,
}

/// A player's place in a league: their tier and what each seal decided for them, the
/// newest last (at most [`MAX_CHANGES`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LeagueStanding {
    pub tier: String,
    pub changes: Vec<TierChange>,
}

impl LeagueStanding {
    /// Whether a seal of `occurrence` was applied already.
    pub fn has(&self, occurrence: &str) -> bool {
        self.changes.iter().any(|c| c.occurrence == occurrence)
    }

    /// The standing with `change` applied (once: a change of an occurrence it has is
    /// no change).
    pub fn with(mut self, change: &TierChange) -> Self {
        if !self.has(&change.occurrence) {
            self.tier = change.tier_after.clone();
            self.changes.push(change.clone());
            let over = self.changes.len().saturating_sub(MAX_CHANGES);
            self.changes.drain(..over);
        }
        self
    }
}

impl Settled {
    /// The change this outcome makes to its player's standing.
    pub fn change(&self, league: &League, occurrence: &str, cohort: u64, at: i64) -> TierChange {
        TierChange {
            occurrence: occurrence.to_owned(),
            cohort,
            rank: self.rank,
            tier_before: league.tier_id(self.tier_before).to_owned(),
            tier_after: league.tier_id(self.tier_after).to_owned(),
            reward: self.reward.clone(),
            settled_at: at,
        }
    }
}

/// Tier `i` of `n`'s own rules (`fresh`: its id is not an earlier tier's); a refusal
/// names the field as `league.tiers.…` ([`DomainError::in_item`] adds the place).
fn check_tier(tier: &Tier, fresh: bool, i: usize, n: usize) -> Result<(), DomainError> {
    parse_name("league.tiers.id", &tier.id)?;
    if !fresh {
        return Err(DomainError::invalid(
            "league.tiers.id",
            "tier ids are unique",
        ));
    }
    if let Some(z) = tier.promote {
        if i + 1 == n {
            return Err(DomainError::invalid(
                "league.tiers.promote",
                "the top tier promotes no one",
            ));
        }
        z.checked("league.tiers.promote")?;
    }
    if let Some(z) = tier.demote {
        if i == 0 {
            return Err(DomainError::invalid(
                "league.tiers.demote",
                "the lowest tier demotes no one",
            ));
        }
        z.checked("league.tiers.demote")?;
    }
    check_ranges("league.tiers.rewards", &tier.rewards)
}

#[cfg(test)]
mod tests;
