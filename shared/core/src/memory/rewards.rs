//! The in-memory [`RewardStore`]: rewards by player and id, claimed under the store's
//! one lock, so two claims at once are one claim, as DynamoDB's conditional write makes
//! them.

use super::store::MemoryStore;
use crate::store::{ClaimOutcome, Reward, RewardStatus, RewardStore, StoreError};
use leaderboard_rules::ids::PlayerId;

impl RewardStore for MemoryStore {
    async fn put_rewards(&self, rewards: &[Reward]) -> Result<u64, StoreError> {
        self.with(|t| {
            let mut new = 0;
            for r in rewards {
                let key = (r.player_id.to_string(), r.reward_id.clone());
                t.rewards.entry(key).or_insert_with(|| {
                    new += 1;
                    r.clone()
                });
            }
            new
        })
    }

    async fn list_rewards(&self, player: &PlayerId, limit: u32) -> Result<Vec<Reward>, StoreError> {
        self.with(|t| {
            (t.rewards.iter())
                .filter(|((p, _), _)| p == player.as_str())
                .map(|(_, r)| r.clone())
                .take(limit as usize)
                .collect()
        })
    }

    async fn claim_reward(
        &self,
        player: &PlayerId,
        id: &str,
        by: &str,
        now: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        self.with(|t| {
            let Some(r) = t.rewards.get_mut(&(player.to_string(), id.to_owned())) else {
                return ClaimOutcome::Missing;
            };
            if r.status == RewardStatus::Claimed {
                return ClaimOutcome::Already(r.clone());
            }
            if r.expired(now) {
                return ClaimOutcome::Expired(r.clone());
            }
            r.status = RewardStatus::Claimed;
            r.claimed_at = Some(now);
            r.claimed_by = Some(by.to_owned());
            ClaimOutcome::Claimed(r.clone())
        })
    }

    async fn mark_claim_published(&self, player: &PlayerId, id: &str) -> Result<(), StoreError> {
        self.with(|t| {
            if let Some(r) = t.rewards.get_mut(&(player.to_string(), id.to_owned())) {
                r.claim_published = true;
            }
        })
    }

    async fn erase_rewards(&self, player: &PlayerId) -> Result<u64, StoreError> {
        self.with(|t| {
            let before = t.rewards.len();
            t.rewards.retain(|(p, _), _| p != player.as_str());
            (before - t.rewards.len()) as u64
        })
    }
}
