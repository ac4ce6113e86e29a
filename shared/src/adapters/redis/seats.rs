//! [`SeatHints`] over Redis: a counter and a list of seats given back per occurrence,
//! beside its board's keys (same hash tag), one script call each.

use tracing::instrument;

use super::RedisRankIndex;
use super::calls::{Seat, SeatBack};
use super::keys::SeatKeys;
use leaderboard_core::store::{IndexError, SeatHints};
use leaderboard_rules::ids::LeaderboardId;

impl SeatHints for RedisRankIndex {
    #[instrument(skip(self))]
    async fn next_seat(
        &self,
        occ: &LeaderboardId,
        floor: u64,
        expire_at: i64,
    ) -> Result<u64, IndexError> {
        let keys = SeatKeys::new(&self.prefix, occ);
        self.run(&Seat {
            keys: &keys,
            floor,
            expire_at,
        })
        .await
    }

    #[instrument(skip(self))]
    async fn give_back(
        &self,
        occ: &LeaderboardId,
        seat: u64,
        expire_at: i64,
    ) -> Result<(), IndexError> {
        let keys = SeatKeys::new(&self.prefix, occ);
        self.run::<i64>(&SeatBack {
            keys: &keys,
            seat,
            expire_at,
        })
        .await
        .map(drop)
    }
}
