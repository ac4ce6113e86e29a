//! The in-memory [`TournamentStore`] and [`SeatHints`]: definitions created if absent,
//! a join taking its seat and its membership both or neither, and a seat counter with a
//! list of seats given back (docs/tournaments.md).

use super::index::MemoryIndex;
use super::store::MemoryStore;
use crate::service::ttl_cache::lock;
use crate::store::{
    Consistency, IndexError, SeatHints, SeatTaken, StoreError, TournamentPage, TournamentStore,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::league::{LeagueStanding, TierChange};
use leaderboard_rules::page::Paging;
use leaderboard_rules::tournament::{Member, Tournament};

impl TournamentStore for MemoryStore {
    async fn create_tournament(&self, t: &Tournament) -> Result<Option<Tournament>, StoreError> {
        self.with(|tables| match tables.tournaments.get(&t.tournament_id) {
            Some(existing) => Some(existing.clone()),
            None => {
                tables
                    .tournaments
                    .insert(t.tournament_id.clone(), t.clone());
                None
            }
        })
    }

    async fn get_tournament(&self, id: &str) -> Result<Option<Tournament>, StoreError> {
        self.with(|t| t.tournaments.get(id).cloned())
    }

    async fn replace_tournament(
        &self,
        old: &Tournament,
        new: &Tournament,
        audit: &crate::store::AuditRecord,
    ) -> Result<bool, StoreError> {
        self.with(|t| {
            if t.tournaments.get(&old.tournament_id) != Some(old) {
                return false;
            }
            t.tournaments.insert(new.tournament_id.clone(), new.clone());
            t.audit.insert(audit.id.clone(), audit.clone());
            true
        })
    }

    async fn list_tournaments(&self, page: Paging<'_>) -> Result<TournamentPage, StoreError> {
        let Paging { after, limit } = page;
        self.with(|t| {
            let from = after.map_or(std::ops::Bound::Unbounded, |a| {
                std::ops::Bound::Excluded(a.to_owned())
            });
            let tournaments: Vec<Tournament> = (t.tournaments)
                .range((from, std::ops::Bound::Unbounded))
                .take(limit as usize)
                .map(|(_, t)| t.clone())
                .collect();
            let next = (tournaments.len() == limit as usize)
                .then(|| tournaments.last().map(|t| t.tournament_id.clone()))
                .flatten();
            TournamentPage { tournaments, next }
        })
    }

    async fn get_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        _: Consistency,
    ) -> Result<Option<Member>, StoreError> {
        self.with(|t| t.members.get(&(occ.clone(), player.to_string())).cloned())
    }

    async fn take_seat(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        member: &Member,
    ) -> Result<SeatTaken, StoreError> {
        tokio::task::yield_now().await;
        self.with(|t| {
            let seat_held = t.seats.contains_key(&(occ.clone(), member.seat));
            let joined_key = (occ.clone(), player.to_string());
            if t.members.contains_key(&joined_key) {
                return SeatTaken::AlreadyJoined {
                    seat_unused: !seat_held,
                };
            }
            if seat_held {
                return SeatTaken::SeatHeld;
            }
            t.seats
                .insert((occ.clone(), member.seat), player.to_string());
            t.members.insert(joined_key, member.clone());
            SeatTaken::Taken
        })
    }

    async fn highest_seat(
        &self,
        occ: &LeaderboardId,
        seats: std::ops::Range<u64>,
    ) -> Result<Option<u64>, StoreError> {
        self.with(|t| {
            (t.seats.keys())
                .filter(|(o, s)| o == occ && seats.contains(s))
                .map(|(_, s)| *s)
                .max()
        })
    }

    async fn forget_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        self.with(|t| {
            let Some(m) = t.members.remove(&(occ.clone(), player.to_string())) else {
                return false;
            };
            if let Some(holder) = t.seats.get_mut(&(occ.clone(), m.seat)) {
                holder.clear();
            }
            true
        })
    }

    async fn bump_seat_counter(
        &self,
        occ: &LeaderboardId,
        floor: u64,
    ) -> Result<Option<u64>, StoreError> {
        self.with(|t| match t.seat_counters.get_mut(occ) {
            Some(n) if *n >= floor => {
                *n += 1;
                Some(*n - 1)
            }
            _ => None,
        })
    }

    async fn raise_seat_counter(&self, occ: &LeaderboardId, to: u64) -> Result<(), StoreError> {
        self.with(|t| {
            let n = t.seat_counters.entry(occ.clone()).or_insert(to);
            *n = (*n).max(to);
        })
    }

    async fn seat_holders(
        &self,
        occ: &LeaderboardId,
        seats: &[u64],
    ) -> Result<Vec<Option<PlayerId>>, StoreError> {
        self.with(|t| {
            (seats.iter())
                .map(|s| (t.seats.get(&(occ.clone(), *s))).and_then(|p| PlayerId::parse(p).ok()))
                .collect()
        })
    }

    async fn get_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> Result<Option<LeagueStanding>, StoreError> {
        let at = (tournament.to_owned(), player.to_string());
        self.with(|t| t.leagues.get(&at).cloned())
    }

    async fn settle_league_member(
        &self,
        tournament: &str,
        player: &PlayerId,
        change: &TierChange,
    ) -> Result<bool, StoreError> {
        let at = (tournament.to_owned(), player.to_string());
        self.with(|t| {
            let standing = t.leagues.remove(&at).unwrap_or_default();
            let new = !standing.has(&change.occurrence);
            t.leagues.insert(at, standing.with(change));
            new
        })
    }

    async fn forget_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        let at = (tournament.to_owned(), player.to_string());
        self.with(|t| t.leagues.remove(&at).is_some())
    }
}

impl SeatHints for MemoryIndex {
    async fn next_seat(
        &self,
        occ: &LeaderboardId,
        floor: u64,
        _expire_at: i64,
    ) -> Result<u64, IndexError> {
        self.up()?;
        let mut all = lock(&self.seats);
        let seats = all.entry(occ.clone()).or_default();
        if let Some(seat) = seats.given.pop_front() {
            return Ok(seat);
        }
        let seat = seats.next.max(floor);
        seats.next = seat + 1;
        Ok(seat)
    }

    async fn give_back(
        &self,
        occ: &LeaderboardId,
        seat: u64,
        _expire_at: i64,
    ) -> Result<(), IndexError> {
        self.up()?;
        let mut all = lock(&self.seats);
        all.entry(occ.clone()).or_default().given.push_back(seat);
        Ok(())
    }
}
