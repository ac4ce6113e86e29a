//! [`RewardStore`] over DynamoDB: each reward at `RW#{player}`, `{reward id}` (the
//! sealed window's board id), written once with a condition that it does not exist
//! and claimed with a condition that it is unclaimed and unexpired, so two claims at
//! once are one. The table's TTL (`expires_at`, seconds) deletes a reward a month past
//! its expiry: until then a late claim is told it expired, and a claimed one still
//! answers its claim.

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use futures::{StreamExt, TryStreamExt};
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{Item, key, reward_partition};
use leaderboard_core::store::{ClaimOutcome, Reward, RewardStatus, RewardStore, StoreError};
use leaderboard_rules::ids::PlayerId;

/// How long a reward is kept past its expiry, in seconds.
const KEPT_PAST_EXPIRY_S: i64 = 30 * 86_400;
/// Rewards written at once.
const WRITES: usize = 16;

#[derive(Serialize, Deserialize)]
struct RewardItem {
    pk: String,
    sk: String,
    kind: String,
    /// The TTL, seconds since the epoch.
    expires_at: i64,
    #[serde(flatten)]
    reward: Reward,
}

fn item(r: &Reward) -> Result<Item, StoreError> {
    serde_dynamo::to_item(RewardItem {
        pk: reward_partition(&r.player_id),
        sk: r.reward_id.clone(),
        kind: "reward".into(),
        expires_at: r.expires_at / 1000 + KEPT_PAST_EXPIRY_S,
        reward: r.clone(),
    })
    .map_err(StoreError::item)
}

fn reward(item: Item) -> Result<Reward, StoreError> {
    Ok(serde_dynamo::from_item::<_, RewardItem>(item)
        .map_err(StoreError::item)?
        .reward)
}

impl DynamoScoreStore {
    /// Writes one reward unless it exists: true if new.
    async fn put_reward(&self, r: &Reward) -> Result<bool, StoreError> {
        self.put_new(item(r)?, "PutItem(reward)").await
    }
}

impl RewardStore for DynamoScoreStore {
    #[instrument(skip_all, fields(rewards = rewards.len()))]
    async fn put_rewards(&self, rewards: &[Reward]) -> Result<u64, StoreError> {
        let puts: Vec<_> = rewards.iter().map(|r| self.put_reward(r)).collect();
        let written = futures::stream::iter(puts)
            .buffer_unordered(WRITES)
            .try_collect::<Vec<bool>>()
            .await?;
        Ok(written.into_iter().filter(|new| *new).count() as u64)
    }

    #[instrument(skip(self))]
    async fn list_rewards(&self, player: &PlayerId, limit: u32) -> Result<Vec<Reward>, StoreError> {
        let out = self
            .partition(&reward_partition(player))
            .consistent_read(true)
            .limit(limit as i32)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(rewards)", e))?;
        out.items
            .unwrap_or_default()
            .into_iter()
            .map(reward)
            .collect()
    }

    #[instrument(skip(self))]
    async fn claim_reward(
        &self,
        player: &PlayerId,
        id: &str,
        by: &str,
        now: i64,
    ) -> Result<ClaimOutcome, StoreError> {
        let at = key(reward_partition(player), id.to_owned());
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(at.clone()))
            .update_expression("SET #status = :claimed, claimed_at = :now, claimed_by = :by")
            .condition_expression("#status = :unclaimed AND expires_ms > :now")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":claimed", AttributeValue::S("CLAIMED".into()))
            .expression_attribute_values(":unclaimed", AttributeValue::S("UNCLAIMED".into()))
            .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
            .expression_attribute_values(":by", AttributeValue::S(by.to_owned()))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match res {
            Ok(out) => Ok(ClaimOutcome::Claimed(reward(
                out.attributes.unwrap_or_default(),
            )?)),
            // Claimed already, expired, or no such reward (the condition fails on an
            // absent item as well): a strong read tells which.
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                let found = self.get_item(at, "GetItem(reward)").await?;
                Ok(match found.map(reward).transpose()? {
                    None => ClaimOutcome::Missing,
                    Some(r) if r.status == RewardStatus::Claimed => ClaimOutcome::Already(r),
                    Some(r) => ClaimOutcome::Expired(r),
                })
            }
            Err(e) => Err(StoreError::call("UpdateItem(claim reward)", e)),
        }
    }

    #[instrument(skip(self))]
    async fn mark_claim_published(&self, player: &PlayerId, id: &str) -> Result<(), StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(reward_partition(player), id.to_owned())))
            .update_expression("SET claim_published = :t")
            .condition_expression("attribute_exists(pk)")
            .expression_attribute_values(":t", AttributeValue::Bool(true))
            .send()
            .await;
        match res {
            // Erased since: nothing left to mark.
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(())
            }
            other => other
                .map(|_| ())
                .map_err(|e| StoreError::call("UpdateItem(claim published)", e)),
        }
    }

    #[instrument(skip(self))]
    async fn erase_rewards(&self, player: &PlayerId) -> Result<u64, StoreError> {
        self.delete_partition(&reward_partition(player), "rewards")
            .await
    }
}
