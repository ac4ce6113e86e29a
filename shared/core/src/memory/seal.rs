//! The in-memory [`SealStore`] and an [`EventPublisher`] that keeps what it published.

use std::sync::Mutex;

use super::store::MemoryStore;
use crate::service::ttl_cache::lock;
use crate::store::StoreError;
use crate::store::{
    EventPublisher, HistoryQuery, HistoryRow, Results, SealState, SealStore, WindowClosed,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};

impl SealStore for MemoryStore {
    async fn get_seal(&self, lb: &LeaderboardId) -> Result<Option<SealState>, StoreError> {
        self.with(|t| t.seals.get(lb).cloned())
    }

    async fn claim_seal(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<Option<SealState>, StoreError> {
        self.with(|t| {
            let state = t
                .seals
                .entry(lb.clone())
                .or_insert_with(|| SealState::begun("", now));
            if state.published || state.lease_until >= now && !state.owner.is_empty() {
                return None;
            }
            state.owner = owner.to_owned();
            state.lease_until = lease_until;
            Some(state.clone())
        })
    }

    async fn save_seal(&self, lb: &LeaderboardId, state: &SealState) -> Result<bool, StoreError> {
        self.with(|t| match t.seals.get_mut(lb) {
            Some(held) if held.owner == state.owner => {
                *held = state.clone();
                true
            }
            _ => false,
        })
    }

    async fn put_history(&self, rows: &[HistoryRow]) -> Result<(), StoreError> {
        self.with(|t| {
            for row in rows {
                let key = (row.player_id.to_string(), row.window.leaderboard_id.clone());
                t.history.insert(key, row.clone());
            }
        })
    }

    async fn history(&self, q: &HistoryQuery<'_>) -> Result<Vec<HistoryRow>, StoreError> {
        self.with(|t| {
            let mut rows: Vec<HistoryRow> = t
                .history
                .values()
                .filter(|r| {
                    let w = &r.window;
                    &r.player_id == q.player
                        && (w.game.as_str(), w.mode.as_str(), w.scope.as_str())
                            == (q.game, q.mode, q.scope)
                        && w.period == q.period
                        && q.end_at_most.is_none_or(|e| w.end <= e)
                })
                .cloned()
                .collect();
            rows.sort_by_key(|r| std::cmp::Reverse(r.window.end));
            rows.truncate(q.limit as usize);
            rows
        })
    }

    async fn erase_history(&self, player: &PlayerId) -> Result<u64, StoreError> {
        self.with(|t| {
            let before = t.history.len();
            t.history.retain(|(p, _), _| p != player.as_str());
            (before - t.history.len()) as u64
        })
    }

    async fn put_results(&self, results: &Results) -> Result<(), StoreError> {
        self.with(|t| {
            t.results
                .insert(results.window.leaderboard_id.clone(), results.clone());
        })
    }

    async fn get_results(&self, lb: &LeaderboardId) -> Result<Option<Results>, StoreError> {
        self.with(|t| t.results.get(lb).cloned())
    }

    async fn redact_results(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        self.with(|t| {
            t.results
                .get_mut(lb)
                .is_some_and(|results| results.unname(player))
        })
    }

    async fn mark_sealed(&self, board: &Board, at: i64) -> Result<(), StoreError> {
        self.with(|t| {
            if let Some(b) = t.board_mut(&board.leaderboard_id) {
                b.sealed_at = Some(at);
            }
        })
    }
}

/// Keeps every event published, in order.
#[derive(Default)]
pub struct MemoryEvents {
    published: Mutex<Vec<WindowClosed>>,
    started: Mutex<Vec<crate::store::TournamentStarted>>,
    settled: Mutex<Vec<crate::store::LeagueSettled>>,
    turns: Mutex<Vec<crate::store::WindowTurn>>,
    held: Mutex<Vec<crate::store::HeldResult>>,
    decided: Mutex<Vec<crate::store::RewardsDecided>>,
    resets: Mutex<Vec<crate::store::BoardResetDone>>,
    claimed: Mutex<Vec<crate::store::RewardClaimed>>,
}

impl MemoryEvents {
    pub fn published(&self) -> Vec<WindowClosed> {
        lock(&self.published).clone()
    }

    /// The `tournament.started` events, in order.
    pub fn started(&self) -> Vec<crate::store::TournamentStarted> {
        lock(&self.started).clone()
    }

    /// The `league.settled` events, in order.
    pub fn settled(&self) -> Vec<crate::store::LeagueSettled> {
        lock(&self.settled).clone()
    }

    /// The `result.held` events, in order.
    pub fn held(&self) -> Vec<crate::store::HeldResult> {
        lock(&self.held).clone()
    }

    /// The `board.reset` events, in order.
    pub fn resets(&self) -> Vec<crate::store::BoardResetDone> {
        lock(&self.resets).clone()
    }

    /// The `rewards.decided` events, in order.
    pub fn decided(&self) -> Vec<crate::store::RewardsDecided> {
        lock(&self.decided).clone()
    }

    /// The `reward.claimed` events, in order.
    pub fn claimed(&self) -> Vec<crate::store::RewardClaimed> {
        lock(&self.claimed).clone()
    }

    /// The `window.opened` and `window.closing` events, in order.
    pub fn turns(&self) -> Vec<crate::store::WindowTurn> {
        lock(&self.turns).clone()
    }
}

impl EventPublisher for MemoryEvents {
    async fn window_closed(&self, event: &WindowClosed) -> Result<(), StoreError> {
        lock(&self.published).push(event.clone());
        Ok(())
    }

    async fn tournament_started(
        &self,
        event: &crate::store::TournamentStarted,
    ) -> Result<(), StoreError> {
        lock(&self.started).push(event.clone());
        Ok(())
    }

    async fn league_settled(&self, event: &crate::store::LeagueSettled) -> Result<(), StoreError> {
        lock(&self.settled).push(event.clone());
        Ok(())
    }

    async fn window_turned(&self, event: &crate::store::WindowTurn) -> Result<(), StoreError> {
        lock(&self.turns).push(event.clone());
        Ok(())
    }

    async fn result_held(&self, held: &crate::store::HeldResult) -> Result<(), StoreError> {
        lock(&self.held).push(held.clone());
        Ok(())
    }

    async fn board_reset(&self, event: &crate::store::BoardResetDone) -> Result<(), StoreError> {
        lock(&self.resets).push(event.clone());
        Ok(())
    }

    async fn rewards_decided(
        &self,
        event: &crate::store::RewardsDecided,
    ) -> Result<(), StoreError> {
        lock(&self.decided).push(event.clone());
        Ok(())
    }

    async fn reward_claimed(&self, event: &crate::store::RewardClaimed) -> Result<(), StoreError> {
        lock(&self.claimed).push(event.clone());
        Ok(())
    }
}
