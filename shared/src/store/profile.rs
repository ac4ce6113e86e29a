//! [`ProfileStore`]: players' profiles, the source of truth of the names every row
//! shows (the rank index keeps a copy of each card, see [`super::RankIndex::cards`]).

use std::future::Future;

use crate::ids::PlayerId;
use crate::profile::{Card, Profile};
use crate::store::{CommitOutcome, StoreError};

/// A profile as stored. Its version moves on with every write, an erasure included (an
/// erased profile is an empty one at the next version, so no copy of the old one can
/// win over it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StoredProfile {
    pub profile: Profile,
    /// 0 for a player who never had a profile.
    pub version: u64,
    /// When it was last written, ms since the epoch (0 for none).
    pub updated_at: i64,
}

/// A card at the version of the profile it came from (version 0, empty: no profile).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VersionedCard {
    pub version: u64,
    pub card: Card,
}

/// Players' profiles.
pub trait ProfileStore: Send + Sync {
    /// The player's profile; the default (version 0, empty) when they have none.
    fn get_profile(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<StoredProfile, StoreError>> + Send;

    /// The cards of many players, in the order asked (BatchGetItem, 100 keys a call).
    fn get_cards(
        &self,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<VersionedCard>, StoreError>> + Send;

    /// Writes `profile` at `profile.version` if the stored one is still at
    /// `profile.version - 1` (0: none stored).
    fn put_profile(
        &self,
        player: &PlayerId,
        profile: &StoredProfile,
    ) -> impl Future<Output = Result<CommitOutcome, StoreError>> + Send;
}
