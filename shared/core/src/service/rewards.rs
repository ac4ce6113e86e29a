//! Players' rewards (docs/rewards.md): what a sealed window's reward table decided for
//! them, read (`GET /me/rewards`, `GET /players/{p}/rewards`) and claimed once (`POST
//! /me/rewards/{id}/claim`, or a game server's `POST /players/{p}/rewards/{id}/claim`).
//!
//! A claim is one conditional write: of two at once, one claims and the other is told
//! the first claim, as a retry is. The claim's `leaderboard.reward.claimed` event,
//! which the game's economy grants from, goes out after the write and is then marked
//! out. A claim answers 200 only once the event is out: one that finds the reward
//! claimed moments ago and its event not yet out answers 503 `contention` (the first
//! claim is publishing it), and one that finds it claimed longer ago
//! ([`EVENT_GRACE_MS`]; the first claim's publication failed, and it answered 503)
//! publishes it. So the event goes out once, or again only after a failure, and its
//! `claim_id` lets the economy drop a second.

use serde::Serialize;
use tracing::instrument;

use super::ServiceError;
use crate::store::{
    ClaimOutcome, EventPublisher, Reward, RewardClaimed, RewardStatus, RewardStore,
};
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::window::Period;

/// The most rewards a player's read lists (a player earns at most one a window).
pub const LIST_LIMIT: u32 = 1_000;
/// How long a claim has to publish its event before a later claim of the same reward
/// publishes it instead.
pub const EVENT_GRACE_MS: i64 = 5_000;

/// A reward as replies show it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RewardView {
    pub reward_id: String,
    pub leaderboard_id: LeaderboardId,
    pub game: String,
    pub mode: String,
    pub scope: String,
    pub period: Period,
    pub window: String,
    /// The place that earned it, under the table's rank mode, and the score there.
    pub place: u64,
    pub score: Shown,
    pub reward: String,
    pub quantity: u32,
    pub decided_at: String,
    pub expires_at: String,
    /// `UNCLAIMED` or `CLAIMED`.
    pub status: RewardStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_at: Option<String>,
    /// `player`, or the game server's or operator's identity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claimed_by: Option<String>,
}

impl RewardView {
    pub fn of(r: Reward) -> Self {
        let w = r.window;
        Self {
            reward_id: r.reward_id,
            score: w.scores.show_scaled(r.score),
            leaderboard_id: w.leaderboard_id,
            game: w.game,
            mode: w.mode,
            scope: w.scope,
            period: w.period,
            window: w.window,
            place: r.place,
            reward: r.reward,
            quantity: r.quantity,
            decided_at: rfc3339_ms(r.decided_at),
            expires_at: rfc3339_ms(r.expires_at),
            status: r.status,
            claimed_at: r.claimed_at.map(rfc3339_ms),
            claimed_by: r.claimed_by,
        }
    }
}

/// A player's rewards: those they may claim now, and those claimed (kept a month past
/// their expiry). Expired unclaimed ones are left out.
#[derive(Debug, Serialize)]
pub struct RewardsReply {
    pub player_id: PlayerId,
    pub rewards: Vec<RewardView>,
    pub claimed: Vec<RewardView>,
}

/// Reads a player's rewards.
#[instrument(skip(store))]
pub async fn list<S: RewardStore>(
    store: &S,
    player: &PlayerId,
) -> Result<RewardsReply, ServiceError> {
    let now = now_ms();
    let (claimed, open): (Vec<Reward>, Vec<Reward>) = (store.list_rewards(player, LIST_LIMIT))
        .await?
        .into_iter()
        .filter(|r| !r.expired(now))
        .partition(|r| r.status == RewardStatus::Claimed);
    Ok(RewardsReply {
        player_id: player.clone(),
        rewards: open.into_iter().map(RewardView::of).collect(),
        claimed: claimed.into_iter().map(RewardView::of).collect(),
    })
}

/// A claim's reply: the reward as claimed, and whether it was claimed before (a retry,
/// or another claim at the same time).
#[derive(Debug, Serialize)]
pub struct ClaimReply {
    pub reward: RewardView,
    pub replayed: bool,
}

/// Claims `player`'s reward `id` for `by` (`player`, or a server's identity).
#[instrument(skip(store, events))]
pub async fn claim<S: RewardStore, E: EventPublisher>(
    store: &S,
    events: &E,
    player: &PlayerId,
    id: &str,
    by: &str,
) -> Result<ClaimReply, ServiceError> {
    let now = now_ms();
    let (reward, replayed) = match store.claim_reward(player, id, by, now).await? {
        ClaimOutcome::Claimed(r) => (r, false),
        ClaimOutcome::Already(r)
            if !r.claim_published && now - r.claimed_at.unwrap_or(0) < EVENT_GRACE_MS =>
        {
            // The first claim is publishing its event: ask again in a moment.
            return Err(ServiceError::Contention);
        }
        ClaimOutcome::Already(r) => (r, true),
        ClaimOutcome::Expired(r) => {
            return Err(ServiceError::RewardExpired {
                id: id.to_owned(),
                expired_at: rfc3339_ms(r.expires_at),
            });
        }
        ClaimOutcome::Missing => return Err(ServiceError::RewardNotFound(id.to_owned())),
    };
    if !reward.claim_published {
        events.reward_claimed(&RewardClaimed::of(&reward)).await?;
        store.mark_claim_published(player, id).await?;
    }
    Ok(ClaimReply {
        reward: RewardView::of(reward),
        replayed,
    })
}
