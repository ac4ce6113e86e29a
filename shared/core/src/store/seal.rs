//! [`SealStore`]: a closed window's sealed results (the top, every participant's final
//! place in their history) and the lease-held progress of the run that seals it.

use std::future::Future;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;
use leaderboard_rules::board::Board;
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::tiebreak::Ties;
use leaderboard_rules::window::Period;

/// Where the sealing of one window stands. One run at a time holds it (`owner`, until
/// `lease_until`); a run that stops leaves its place for the next to go on from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealState {
    /// The run holding the lease (a random id per run).
    pub owner: String,
    /// Until when, ms since the epoch; after that another run may take over.
    pub lease_until: i64,
    /// The rank sort key of the last participant recorded (cleared once walked, as it
    /// names a player).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// Participants recorded so far: the rank of `after`.
    pub recorded: u64,
    /// Every participant is recorded and the results are stored.
    #[serde(default)]
    pub walked: bool,
    /// A league cohort's outcome is applied to its members' standings and history.
    #[serde(default)]
    pub settled: bool,
    /// Its `league.settled` event was published.
    #[serde(default)]
    pub league_published: bool,
    /// The window's rewards are decided and stored (or it has no reward table).
    #[serde(default)]
    pub rewarded: bool,
    /// Its `rewards.decided` event was published (or it decided none).
    #[serde(default)]
    pub rewards_published: bool,
    /// The window-closed event was published: the seal is done.
    #[serde(default)]
    pub published: bool,
    pub started_at: i64,
}

impl SealState {
    /// A seal that `owner` began at `started_at` and has not gone on with: no lease,
    /// nobody recorded, nothing published.
    pub fn begun(owner: &str, started_at: i64) -> Self {
        SealState {
            owner: owner.to_owned(),
            lease_until: 0,
            after: None,
            recorded: 0,
            walked: false,
            settled: false,
            league_published: false,
            rewarded: false,
            rewards_published: false,
            published: false,
            started_at,
        }
    }
}

/// One participant's final place on a sealed board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placing {
    /// 1-based, unique (the board's order).
    pub rank: u64,
    /// Absent once the player was erased (the place itself stays).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_id: Option<PlayerId>,
    pub score: i64,
    /// The tie-break values, encoded (absent on a board without columns).
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    pub ties: Ties,
    /// When the score was reached, ms since the epoch.
    pub reached_at: i64,
}

/// Which window a sealed board was: its family, scope and period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SealedWindow {
    pub leaderboard_id: LeaderboardId,
    pub game: String,
    pub mode: String,
    pub scope: String,
    pub period: Period,
    /// The window's key, e.g. `2026-W47`.
    pub window: String,
    /// `[start, end)`, ms since the epoch.
    pub start: i64,
    pub end: i64,
    /// How the board wrote its scores, so its results and history rows write them alike
    /// (docs/decimals.md); absent on integer boards and rows sealed before it existed.
    #[serde(default, skip_serializing_if = "ScoreFormat::is_integer")]
    pub scores: ScoreFormat,
}

impl SealedWindow {
    /// The window of a family board (`None` for standalone and ALL_TIME boards, which
    /// are never sealed).
    pub fn of(board: &Board) -> Option<Self> {
        let w = board.window.as_ref()?;
        Some(Self {
            leaderboard_id: board.leaderboard_id.clone(),
            game: w.game.clone(),
            mode: w.mode.clone(),
            scope: w.scope.clone(),
            period: w.window.period,
            window: w.window.key.clone()?,
            start: w.window.start?,
            end: w.window.end?,
            scores: board.scores,
        })
    }
}

/// A sealed board's results: its top and how many took part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Results {
    #[serde(flatten)]
    pub window: SealedWindow,
    /// When the walk finished, ms since the epoch.
    pub sealed_at: i64,
    /// Participants (standings when the window was sealed).
    pub total: u64,
    /// The top, at most [`crate::service::seal::RESULTS_TOP`].
    pub top: Vec<Placing>,
    /// A league cohort's outcome (docs/leagues.md): every member's, decided once from
    /// `top` and the members without a result, in that order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<Vec<leaderboard_rules::league::Settled>>,
    /// The reward table the seal decided the window's rewards by (docs/rewards.md),
    /// kept so a run again decides the same ones whatever the table is by then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward_table: Option<leaderboard_rules::reward::RewardTable>,
}

impl Results {
    /// Takes `player`'s id out of the top (their place stays); true if they were in it.
    pub fn unname(&mut self, player: &PlayerId) -> bool {
        let mut changed = false;
        for p in &mut self.top {
            if p.player_id.as_ref() == Some(player) {
                p.player_id = None;
                changed = true;
            }
        }
        for s in self.league.iter_mut().flatten() {
            if s.player_id.as_ref() == Some(player) {
                s.player_id = None;
                changed = true;
            }
        }
        changed
    }
}

/// A player's final place in one sealed window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryRow {
    pub player_id: PlayerId,
    #[serde(flatten)]
    pub window: SealedWindow,
    pub rank: u64,
    pub score: i64,
    /// The tie-break values, encoded (absent on a board without columns).
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    pub ties: Ties,
    pub reached_at: i64,
    /// In a league's cohort: the tier the seal moved the player from and to, and
    /// their reward.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub league: Option<LeagueRow>,
}

/// A history row's league outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LeagueRow {
    pub tier_before: String,
    pub tier_after: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reward: Option<String>,
}

/// Which of a player's history rows to read: one family and scope, one period, windows
/// ending at or before `end_at_most`, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryQuery<'a> {
    pub player: &'a PlayerId,
    pub game: &'a str,
    pub mode: &'a str,
    pub scope: &'a str,
    pub period: Period,
    pub end_at_most: Option<i64>,
    pub limit: u32,
}

/// Sealed results, players' history and the sealing's progress.
pub trait SealStore: Send + Sync {
    fn get_seal(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<Option<SealState>, StoreError>> + Send;

    /// Takes the lease for `owner` until `lease_until` if the seal is not done and no
    /// one holds an unexpired lease; keeps the progress of an earlier run. The state as
    /// claimed, or `None` if another run holds it or it is done.
    fn claim_seal(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> impl Future<Output = Result<Option<SealState>, StoreError>> + Send;

    /// Stores the progress if `state.owner` still holds the lease; false if another run
    /// took it over (the caller stops).
    fn save_seal(
        &self,
        lb: &LeaderboardId,
        state: &SealState,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Writes history rows (idempotent: a row is keyed by player and window).
    fn put_history(
        &self,
        rows: &[HistoryRow],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Up to `query.limit` of a player's history rows, newest window first.
    fn history(
        &self,
        query: &HistoryQuery<'_>,
    ) -> impl Future<Output = Result<Vec<HistoryRow>, StoreError>> + Send;

    /// Deletes every history row of the player; how many there were.
    fn erase_history(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<u64, StoreError>> + Send;

    fn put_results(&self, results: &Results)
    -> impl Future<Output = Result<(), StoreError>> + Send;

    fn get_results(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<Option<Results>, StoreError>> + Send;

    /// Takes the player's id out of the board's results, if they are in its top; true
    /// if it changed them.
    fn redact_results(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Marks the board sealed at `at` (its item and its list entry), so that later
    /// sweeps pass it by.
    fn mark_sealed(
        &self,
        board: &Board,
        at: i64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}
