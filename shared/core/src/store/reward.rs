//! Players' rewards (docs/rewards.md): what a sealed window's reward table decided for
//! each player, kept until claimed or expired ([`RewardStore`]), and the events that
//! announce a window's rewards and each claim.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;
use crate::store::seal::SealedWindow;
use leaderboard_rules::ids::PlayerId;

/// Where a reward is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RewardStatus {
    Unclaimed,
    Claimed,
}

/// One player's reward from one sealed window. Its id is the window's board id: a
/// player earns at most one reward a window, so a seal run again writes the same one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reward {
    pub reward_id: String,
    pub player_id: PlayerId,
    /// The sealed window (its board id, family, scope, period and key).
    #[serde(flatten)]
    pub window: SealedWindow,
    /// The place that earned it, under the table's rank mode.
    pub place: u64,
    pub score: i64,
    /// The reward's id in the game's economy, and how many.
    pub reward: String,
    pub quantity: u32,
    /// When the seal decided it, and when it expires unclaimed (ms since the epoch).
    pub decided_at: i64,
    /// Stored as `expires_ms`: the table's `expires_at` is its TTL, in seconds.
    #[serde(rename = "expires_ms")]
    pub expires_at: i64,
    pub status: RewardStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<i64>,
    /// Who claimed it: `player` or the game server's (or operator's) identity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
    /// The claim's `reward.claimed` event is out.
    #[serde(default)]
    pub claim_published: bool,
}

impl Reward {
    /// Whether it can no longer be claimed at `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.status == RewardStatus::Unclaimed && self.expires_at <= now
    }
}

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClaimOutcome {
    /// This call claimed it.
    Claimed(Reward),
    /// It was claimed before (by this claim's earlier try or another at once).
    Already(Reward),
    /// It expired unclaimed.
    Expired(Reward),
    /// No such reward of this player.
    Missing,
}

/// Where rewards are kept.
pub trait RewardStore: Send + Sync {
    /// Stores each reward unless one with its player and id exists (a seal run again
    /// writes nothing twice); how many were new.
    fn put_rewards(
        &self,
        rewards: &[Reward],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    /// A player's rewards, claimed or not, expired ones included (the caller filters),
    /// at most `limit`, by id.
    fn list_rewards(
        &self,
        player: &PlayerId,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<Reward>, StoreError>> + Send;

    /// Claims a reward for `by` at `now` if it is unclaimed and unexpired, in one
    /// conditional write: of two claims at once exactly one is `Claimed`.
    fn claim_reward(
        &self,
        player: &PlayerId,
        id: &str,
        by: &str,
        now: i64,
    ) -> impl Future<Output = Result<ClaimOutcome, StoreError>> + Send;

    /// Records that a claim's event is out.
    fn mark_claim_published(
        &self,
        player: &PlayerId,
        id: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Deletes every reward of a player (an erasure); how many.
    fn erase_rewards(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;
}

/// The event a sealed window with a reward table publishes once: every reward it
/// decided (at most 1,000).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewardsDecided {
    /// The same for every publication of this window's rewards (its board id).
    pub rewards_id: String,
    #[serde(flatten)]
    pub window: SealedWindow,
    pub decided_at: i64,
    pub total: u64,
    pub rewards: Vec<DecidedReward>,
}

/// One reward in [`RewardsDecided`]; an erased player's place earns no reward.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecidedReward {
    pub player_id: PlayerId,
    pub place: u64,
    pub reward: String,
    pub quantity: u32,
    pub reward_id: String,
    pub expires_at: i64,
}

/// The event a claim publishes, for the game's economy to grant from: at least once,
/// so a consumer drops a `claim_id` it has seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewardClaimed {
    /// `{player}/{reward id}`: the same for every publication of this claim.
    pub claim_id: String,
    pub player_id: PlayerId,
    pub reward_id: String,
    pub leaderboard_id: leaderboard_rules::ids::LeaderboardId,
    pub reward: String,
    pub quantity: u32,
    pub place: u64,
    pub claimed_at: i64,
    pub claimed_by: String,
}

impl RewardClaimed {
    /// The event of a claimed reward.
    pub fn of(r: &Reward) -> Self {
        Self {
            claim_id: format!("{}/{}", r.player_id, r.reward_id),
            player_id: r.player_id.clone(),
            reward_id: r.reward_id.clone(),
            leaderboard_id: r.window.leaderboard_id.clone(),
            reward: r.reward.clone(),
            quantity: r.quantity,
            place: r.place,
            claimed_at: r.claimed_at.unwrap_or_default(),
            claimed_by: r.claimed_by.clone().unwrap_or_default(),
        }
    }
}
