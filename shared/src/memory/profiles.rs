//! The in-memory [`ProfileStore`]: profiles by player, each write conditional on the
//! version before it.

use super::store::MemoryStore;
use crate::ids::PlayerId;
use crate::store::{CommitOutcome, ProfileStore, StoreError, StoredProfile, VersionedCard};

impl ProfileStore for MemoryStore {
    async fn get_profile(&self, player: &PlayerId) -> Result<StoredProfile, StoreError> {
        self.with(|t| t.profiles.get(player.as_str()).cloned().unwrap_or_default())
    }

    async fn get_cards(&self, players: &[PlayerId]) -> Result<Vec<VersionedCard>, StoreError> {
        self.with(|t| {
            players
                .iter()
                .map(|p| {
                    t.profiles
                        .get(p.as_str())
                        .map(|s| VersionedCard {
                            version: s.version,
                            card: s.profile.card.clone(),
                        })
                        .unwrap_or_default()
                })
                .collect()
        })
    }

    async fn put_profile(
        &self,
        player: &PlayerId,
        profile: &StoredProfile,
    ) -> Result<CommitOutcome, StoreError> {
        self.with(|t| {
            let stored = t.profiles.get(player.as_str()).map_or(0, |s| s.version);
            if stored + 1 != profile.version {
                return CommitOutcome::StandingChanged;
            }
            t.profiles.insert(player.to_string(), profile.clone());
            CommitOutcome::Committed
        })
    }
}
