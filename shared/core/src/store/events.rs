//! [`EventPublisher`]: the events other services react to, each published once (a
//! window's turns, its sealed results, a league's settle, a tournament's start,
//! a window's rewards and each claim).

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;
use crate::store::seal::{Placing, SealedWindow};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::window::Period;

/// Publishes what other services react to.
pub trait EventPublisher: Send + Sync {
    /// Publishes `leaderboard.window.closed`.
    fn window_closed(
        &self,
        event: &WindowClosed,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.tournament.started`.
    fn tournament_started(
        &self,
        event: &TournamentStarted,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.league.settled`.
    fn league_settled(
        &self,
        event: &LeagueSettled,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.window.opened` or `leaderboard.window.closing`.
    fn window_turned(
        &self,
        event: &WindowTurn,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.result.held` (docs/integrity.md).
    fn result_held(
        &self,
        held: &super::HeldResult,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.board.reset` (docs/operations.md).
    fn board_reset(
        &self,
        event: &BoardResetDone,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.rewards.decided` (docs/rewards.md).
    fn rewards_decided(
        &self,
        event: &super::RewardsDecided,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Publishes `leaderboard.reward.claimed` (docs/rewards.md).
    fn reward_claimed(
        &self,
        event: &super::RewardClaimed,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Which turn of a window an event announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Turn {
    /// The window has begun (`leaderboard.window.opened`).
    Opened,
    /// The window ends within the family's lead time (`leaderboard.window.closing`).
    Closing,
}

/// The event a family's window publishes once when it opens and once when it is about
/// to close, for "next reset in ..." displays and start- or end-of-event jobs
/// (docs/schedules.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowTurn {
    /// The same for every publication of this turn of this window: a consumer that sees
    /// an id twice drops the second.
    pub turn_id: String,
    pub turn: Turn,
    pub game: String,
    pub mode: String,
    pub period: Period,
    /// The window's key, e.g. `2026-W47` or `20261127T0300Z`.
    pub window: String,
    /// `[start, end)`, ms since the epoch.
    pub start: i64,
    pub end: i64,
    /// When results stop being taken: the end plus the family's grace.
    pub closes_at: i64,
    /// Each scope's board of the window (`GLOBAL` and every region), whether or not it
    /// has a result yet.
    pub boards: std::collections::BTreeMap<String, LeaderboardId>,
}

/// The event a league's sealed cohort publishes once: every member's final rank,
/// reward and tier before and after (docs/leagues.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueSettled {
    /// The same for every publication of this cohort (its board's id): a consumer that
    /// sees an id twice drops the second.
    pub settle_id: String,
    pub tournament_id: String,
    pub occurrence: String,
    pub cohort: u64,
    /// The cohort's tier.
    pub tier: String,
    /// The cohort's board.
    pub leaderboard_id: LeaderboardId,
    pub sealed_at: i64,
    /// Ranked members first (rank 1 up), then those without a result.
    pub members: Vec<SettledMember>,
}

/// One member in [`LeagueSettled`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SettledMember {
    /// Absent once the player was erased.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<PlayerId>,
    /// None for a member without a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
    pub tier_before: String,
    pub tier_after: String,
}

/// The event an occurrence of a tournament publishes once it has started, for
/// start-of-event jobs (docs/tournaments.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TournamentStarted {
    /// The same for every publication of this occurrence (its board's id): a consumer
    /// that sees an id twice drops the second.
    pub start_id: String,
    pub tournament_id: String,
    pub occurrence: String,
    pub game: String,
    pub mode: String,
    /// `[start, end)`, ms since the epoch.
    pub start: i64,
    pub end: i64,
    /// The occurrence's board.
    pub leaderboard_id: LeaderboardId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cohort_size: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_players: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
}

/// The event a sealed window publishes once, for a rewards service: the window, how
/// many took part and the top.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowClosed {
    /// The same for every publication of this window (the board id): a consumer that
    /// sees an id twice drops the second.
    pub seal_id: String,
    #[serde(flatten)]
    pub window: SealedWindow,
    pub sealed_at: i64,
    pub total: u64,
    /// The top, at most [`crate::service::seal::EVENT_TOP`]; a tournament cohort's
    /// every member with a result (a cohort has at most 1,000).
    pub top: Vec<Placing>,
}

/// The event a board's reset publishes once it has emptied the board (docs/operations.md):
/// the reset, and the archive that keeps the standings it took off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardResetDone {
    /// The archive's id: the same for every publication of this reset.
    pub reset_id: String,
    pub leaderboard_id: LeaderboardId,
    pub reset: u32,
    #[serde(flatten)]
    pub detail: leaderboard_rules::reset::BoardReset,
    /// Where its standings are sealed (`GET /leaderboards/{archive_id}/results`), and
    /// how many.
    pub archive_id: LeaderboardId,
    pub archived: u64,
}
