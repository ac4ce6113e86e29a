//! The review queue's twin: a game's held results in queue-key order.

use super::MemoryStore;
use super::store::Tables;
use crate::store::{
    HeldFilter, HeldPage, HeldResult, HeldStore, MATCH_SPAN_MS, QueueChange, StoreError,
};
use leaderboard_rules::ids::{MatchId, PlayerId};
use leaderboard_rules::page::Paging;

impl Tables {
    /// Whether the queue is as `change` needs it: a result to hold not there yet, a
    /// decided one still there.
    pub(super) fn queue_ready(&self, change: Option<QueueChange<'_>>) -> bool {
        match change {
            None => true,
            Some(QueueChange::Hold(h)) => !self.held.contains_key(&key(h)),
            Some(QueueChange::Release(h) | QueueChange::Reject(h)) => {
                self.held.contains_key(&key(h))
            }
        }
    }

    pub(super) fn apply_queue(&mut self, change: Option<QueueChange<'_>>) {
        match change {
            None => {}
            Some(QueueChange::Hold(h)) => {
                self.held.insert(key(h), h.clone());
            }
            Some(QueueChange::Release(h)) => {
                self.held.remove(&key(h));
            }
            Some(QueueChange::Reject(h)) => {
                self.held.remove(&key(h));
                let tally = (h.game.clone(), h.player_id.to_string());
                let rejected = self.rejections.entry(tally).or_default();
                rejected.insert(h.match_id.to_string());
            }
        }
    }
}

fn key(h: &HeldResult) -> (String, String) {
    (h.game.clone(), h.queue_key())
}

impl HeldStore for MemoryStore {
    async fn rejections(&self, game: &str, player: &PlayerId) -> Result<u32, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| {
            let tally = (game.to_owned(), player.to_string());
            t.rejections.get(&tally).map_or(0, |m| m.len() as u32)
        })
    }

    async fn held_of_match(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        around: Option<i64>,
    ) -> Result<Vec<HeldResult>, StoreError> {
        tokio::task::yield_now().await;
        let near = |h: &HeldResult| around.is_none_or(|at| (h.held_at - at).abs() <= MATCH_SPAN_MS);
        self.with(|t| {
            (t.held.iter())
                .filter(|((g, _), h)| {
                    g == game && &h.player_id == player && &h.match_id == match_id
                })
                .map(|(_, h)| h)
                .filter(|h| near(h))
                .cloned()
                .collect()
        })
    }

    async fn claim_decision(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        approve: bool,
    ) -> Result<bool, StoreError> {
        tokio::task::yield_now().await;
        let key = (game.to_owned(), player.to_string(), match_id.to_string());
        self.with(|t| *t.decisions.entry(key).or_insert(approve))
    }

    async fn get_held(&self, game: &str, qk: &str) -> Result<Option<HeldResult>, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| t.held.get(&(game.to_owned(), qk.to_owned())).cloned())
    }

    async fn held_page(
        &self,
        game: &str,
        filter: &HeldFilter,
        page: Paging<'_>,
    ) -> Result<HeldPage, StoreError> {
        let Paging { after, limit } = page;
        tokio::task::yield_now().await;
        self.with(|t| {
            let from = (game.to_owned(), after.unwrap_or("").to_owned());
            let scanned: Vec<&HeldResult> = (t.held.range(from..))
                .filter(|((g, k), _)| g == game && Some(k.as_str()) != after)
                .take(limit as usize)
                .map(|(_, h)| h)
                .collect();
            let next = (scanned.len() == limit as usize)
                .then(|| scanned.last().map(|h| h.queue_key()))
                .flatten();
            let held = (scanned.into_iter())
                .filter(|h| filter.board.as_ref().is_none_or(|b| b == &h.leaderboard_id))
                .filter(|h| filter.player.as_ref().is_none_or(|p| p == &h.player_id))
                .cloned()
                .collect();
            HeldPage { held, next }
        })
    }
}
