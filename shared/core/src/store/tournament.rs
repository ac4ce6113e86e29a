//! [`TournamentStore`]: tournaments' definitions and their occurrences' seats and
//! members (docs/tournaments.md); [`SeatHints`]: where the next seat number comes from.

use leaderboard_rules::page::Paging;
use std::future::Future;

use std::ops::Range;

use crate::store::{Consistency, IndexError, StoreError};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::league::{LeagueStanding, TierChange};
use leaderboard_rules::tournament::{Member, Tournament};

/// One page of the tournament list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TournamentPage {
    pub tournaments: Vec<Tournament>,
    /// The last tournament id read, where the next page starts, if there is one.
    pub next: Option<String>,
}

/// What one attempt to take a seat for a player came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SeatTaken {
    /// The seat and the membership are the player's (one transaction wrote both).
    Taken,
    /// Another join holds the seat: the hint was behind; nothing was written.
    SeatHeld,
    /// Another transaction was writing one of the items; nothing was written (try the
    /// same seat again).
    Busy,
    /// The player had already joined; nothing was written. `seat_unused`: nobody holds
    /// the seat, which may be given back.
    AlreadyJoined { seat_unused: bool },
}

/// Tournaments in the source of truth. An occurrence is named by its board
/// (`Tournament::board_id`).
pub trait TournamentStore: Send + Sync {
    /// Stores `t` unless a tournament with its id exists; returns that one if so.
    fn create_tournament(
        &self,
        t: &Tournament,
    ) -> impl Future<Output = Result<Option<Tournament>, StoreError>> + Send;

    fn get_tournament(
        &self,
        id: &str,
    ) -> impl Future<Output = Result<Option<Tournament>, StoreError>> + Send;

    /// Replaces the definition `old` by `new` (the same id) and appends `audit`, in one
    /// write, if the stored definition is still `old`; false (nothing written) if it
    /// changed or went meanwhile.
    fn replace_tournament(
        &self,
        old: &Tournament,
        new: &Tournament,
        audit: &super::AuditRecord,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Tournaments by id, after the id `after`, at most `limit`.
    fn list_tournaments(
        &self,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<TournamentPage, StoreError>> + Send;

    /// The player's membership of the occurrence, if they joined it.
    fn get_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        consistency: Consistency,
    ) -> impl Future<Output = Result<Option<Member>, StoreError>> + Send;

    /// Takes `member.seat` for `player` and records the membership, both or neither
    /// (one transaction, each item put only if absent).
    fn take_seat(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        member: &Member,
    ) -> impl Future<Output = Result<SeatTaken, StoreError>> + Send;

    /// The highest seat taken among `seats` of the occurrence (a league's tier's, see
    /// `tournament::tier_seats`), if any (strongly consistent).
    fn highest_seat(
        &self,
        occ: &LeaderboardId,
        seats: Range<u64>,
    ) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;

    /// A seat number from the occurrence's counter in the table, for joins while the
    /// seat hints are away: the counter moved up by one, if it exists and is at least
    /// `floor`; `None` otherwise (it must be set first, [`Self::raise_seat_counter`]).
    /// One item every such join writes: a degraded mode's hot key, not the usual path.
    fn bump_seat_counter(
        &self,
        occ: &LeaderboardId,
        floor: u64,
    ) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;

    /// Sets the counter to `to` unless it is already at least that.
    fn raise_seat_counter(
        &self,
        occ: &LeaderboardId,
        to: u64,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Erases the player from the occurrence: their seat keeps its place (the cohorts
    /// stay as seated) but no longer names them, and their membership goes. True if
    /// they had one. Idempotent: a crash between the two leaves the membership, which
    /// the next call finds again.
    fn forget_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Who holds each of `seats` (`None`: not taken), in the order asked.
    fn seat_holders(
        &self,
        occ: &LeaderboardId,
        seats: &[u64],
    ) -> impl Future<Output = Result<Vec<Option<PlayerId>>, StoreError>> + Send;

    /// The player's standing in the tournament's league, once a seal settled them
    /// (strongly consistent).
    fn get_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<LeagueStanding>, StoreError>> + Send;

    /// Applies one seal's decision to the player's standing (`LeagueStanding::with`),
    /// once: false if the standing had that occurrence already (nothing written).
    fn settle_league_member(
        &self,
        tournament: &str,
        player: &PlayerId,
        change: &TierChange,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Deletes the player's standing (an erasure); true if there was one.
    fn forget_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// The next seat numbers of occurrences: a hint that keeps joins off one hot item. The
/// seat items decide; a hint that was lost or behind only costs a retry.
pub trait SeatHints: Send + Sync {
    /// A seat number to try: a seat given back, else the next one not handed out, and
    /// never below `floor` (the joiner found the seats below it taken). The hint's keys
    /// expire at `expire_at` (epoch seconds).
    fn next_seat(
        &self,
        occ: &LeaderboardId,
        floor: u64,
        expire_at: i64,
    ) -> impl Future<Output = Result<u64, IndexError>> + Send;

    /// Gives back a seat a join handed out and did not take (its player had joined).
    fn give_back(
        &self,
        occ: &LeaderboardId,
        seat: u64,
        expire_at: i64,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;
}
