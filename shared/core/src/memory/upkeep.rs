//! [`MemoryIndex`]'s upkeep and card copies: its markers' health, rebuilds that
//! resume under the same generation and swap in only if their marker survived, repair
//! claims, leases, the sketch.

use std::time::{Duration, Instant};

use super::board::{Board, put};
use super::index::MemoryIndex;
use crate::service::ttl_cache::lock;
use crate::store::{
    CardCopies, Health, IndexEntry, IndexUpkeep, REPAIR_CLAIM, RankSketch, VersionedCard,
};
use crate::store::{IndexError, RebuildStart};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::BoardOrder;

impl CardCopies for MemoryIndex {
    async fn cards(&self, players: &[PlayerId]) -> Result<Vec<Option<VersionedCard>>, IndexError> {
        self.up()?;
        let cards = lock(&self.cards);
        Ok(players.iter().map(|p| cards.get(p).cloned()).collect())
    }

    async fn put_cards(&self, new: &[(PlayerId, VersionedCard)]) -> Result<(), IndexError> {
        self.up()?;
        let mut cards = lock(&self.cards);
        for (player, card) in new {
            if cards
                .get(player)
                .is_none_or(|held| held.version < card.version)
            {
                cards.insert(player.clone(), card.clone());
            }
        }
        Ok(())
    }
}

impl IndexUpkeep for MemoryIndex {
    /// As the Redis adapter's keys would lie, so the control plane's views agree.
    fn slot_of(&self, lb: &LeaderboardId) -> u16 {
        lb.cluster_slot()
    }

    async fn health(&self, boards: &[LeaderboardId]) -> Result<Vec<Health>, IndexError> {
        self.up()?;
        let all = lock(&self.boards);
        Ok(boards
            .iter()
            .map(|lb| all.get(lb).map_or(Health::Missing, Board::health))
            .collect())
    }

    async fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        start: RebuildStart,
    ) -> Result<bool, IndexError> {
        self.with(lb, |b| {
            let same = b.gen_id.as_deref() == Some(gen_id);
            if !start.fresh && b.state == Some(Health::Rebuilding) && same {
                return true;
            }
            b.rebuild.clear();
            b.state = Some(Health::Rebuilding);
            b.gen_id = Some(gen_id.to_owned());
            false
        })
    }

    async fn load(&self, lb: &LeaderboardId, entries: &[IndexEntry]) -> Result<(), IndexError> {
        self.with(lb, |b| {
            for e in entries {
                put(&mut b.rebuild, &mut b.tombs, e);
            }
        })
    }

    async fn finish_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        _: Option<i64>,
    ) -> Result<bool, IndexError> {
        self.with(lb, |b| {
            let ours = b.gen_id.as_deref() == Some(gen_id);
            if b.state != Some(Health::Rebuilding) || !ours {
                return false;
            }
            b.live = std::mem::take(&mut b.rebuild);
            // As the script stamps what it loads: a walk begun before cannot place them.
            let now = b.tick();
            b.stamps = b.live.keys().map(|p| (p.clone(), now)).collect();
            b.state = Some(Health::Ready);
            b.gen_id = None;
            b.window_version += 1;
            true
        })
    }

    async fn sketch(
        &self,
        on: BoardOrder<'_>,
        marks: u64,
        min_size: u64,
    ) -> Result<RankSketch, IndexError> {
        let BoardOrder { lb, dir } = on;
        self.with(lb, |b| {
            b.ready()?;
            let ranked = b.ranked(dir);
            let n = ranked.len() as u64;
            let marks = if n <= min_size { 0 } else { marks.min(n) };
            let ranks: Vec<u64> = (0..marks).map(|i| i * n / marks).collect();
            let keys = ranks
                .iter()
                .map(|r| ranked[*r as usize].sort_key(dir))
                .collect();
            Ok(RankSketch {
                at: leaderboard_rules::time::now_ms(),
                total: n,
                ranks,
                keys,
            })
        })?
    }

    async fn claim_repair(&self, lb: &LeaderboardId) -> Result<bool, IndexError> {
        self.up()?;
        let mut claims = lock(&self.claims);
        let now = Instant::now();
        match claims.get(lb) {
            Some(until) if *until > now => Ok(false),
            _ => {
                claims.insert(lb.clone(), now + REPAIR_CLAIM);
                Ok(true)
            }
        }
    }

    async fn mark_stale(&self, boards: &[LeaderboardId]) -> Result<u64, IndexError> {
        self.up()?;
        let mut all = lock(&self.boards);
        let mut marked = 0;
        for lb in boards {
            if let Some(b) = all.get_mut(lb).filter(|b| b.state.is_some()) {
                b.state = Some(Health::Stale);
                marked += 1;
            }
        }
        Ok(marked)
    }

    async fn acquire_lease(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, IndexError> {
        self.up()?;
        let mut leases = lock(&self.leases);
        let now = Instant::now();
        match leases.get(lb) {
            Some((holder, until)) if holder != owner && *until > now => Ok(false),
            _ => {
                leases.insert(lb.clone(), (owner.to_owned(), now + ttl));
                Ok(true)
            }
        }
    }

    async fn release_lease(&self, lb: &LeaderboardId, owner: &str) -> Result<(), IndexError> {
        self.up()?;
        let mut leases = lock(&self.leases);
        if leases.get(lb).is_some_and(|(holder, _)| holder == owner) {
            leases.remove(lb);
        }
        Ok(())
    }
}
