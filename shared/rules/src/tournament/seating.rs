//! How an occurrence's seats become cohorts: a seat number decides its cohort by
//! arithmetic alone (docs/tournaments.md, "Joining into cohorts without a hot key").

use serde::{Deserialize, Serialize};

use super::{TIER_COHORTS, TIER_SEATS};

/// How an occurrence's joins are dealt into its cohorts (see [`Seating`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CohortSeating {
    /// One cohort fills before the next opens: as few cohorts as the size allows.
    Fill,
    /// Consecutive joins are dealt over [`OPEN_COHORTS`](super::OPEN_COHORTS) cohorts at once.
    Spread,
}

/// A seat's place: its tier, its cohort (numbered as [`TIER_COHORTS`] says) and its
/// position in it (0-based, first come).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub tier: usize,
    pub cohort: u64,
    pub position: u32,
}

/// The seat numbers of a league's tier `tier` ([`TIER_SEATS`]).
pub fn tier_seats(tier: usize) -> std::ops::Range<u64> {
    let first = tier as u64 * TIER_SEATS;
    first..first + TIER_SEATS
}

/// The tier a cohort number belongs to ([`TIER_COHORTS`]).
pub fn tier_of_cohort(cohort: u64) -> usize {
    (cohort / TIER_COHORTS) as usize
}

/// How seat numbers (0, 1, 2, ... in the order joins took them) become cohorts: blocks
/// of `open × size` seats, each block's seats dealt round the block's `open` cohorts.
/// Consecutive joins therefore land in `open` cohorts at once; no cohort gets more than
/// `size` seats; at most `open` cohorts are ever partly filled. A league's tiers each
/// seat this way from their own first seat ([`tier_seats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seating {
    pub size: u32,
    pub open: u32,
}

impl Seating {
    /// The seats of `cohort`, in seat order: those [`Seating::place`] puts in it.
    pub fn seats_of(&self, cohort: u64) -> Vec<u64> {
        let (size, open) = (u64::from(self.size), u64::from(self.open));
        let tier = tier_of_cohort(cohort);
        let cohort = cohort % TIER_COHORTS;
        let first = tier_seats(tier).start + (cohort / open) * open * size + cohort % open;
        (0..size).map(|k| first + k * open).collect()
    }

    pub fn place(&self, seat: u64) -> Place {
        let (size, open) = (u64::from(self.size), u64::from(self.open));
        let tier = (seat / TIER_SEATS) as usize;
        let local = seat % TIER_SEATS;
        let (block, r) = (local / (open * size), local % (open * size));
        Place {
            tier,
            cohort: tier as u64 * TIER_COHORTS + block * open + r % open,
            position: (r / open) as u32,
        }
    }
}
