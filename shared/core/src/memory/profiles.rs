//! The in-memory [`ProfileStore`]: profiles by player, each write conditional on the
//! version before it; the name index computed from them when searched.

use super::store::MemoryStore;
use crate::store::{
    CommitOutcome, NamePage, ProfileStore, StoreError, StoredProfile, VersionedCard, entry_player,
    name_entry,
};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::Paging;

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

    async fn find_names(&self, prefix: &str, page: Paging<'_>) -> Result<NamePage, StoreError> {
        let Paging { after, limit } = page;
        self.with(|t| {
            let mut entries: Vec<String> = (t.profiles.iter())
                .filter_map(|(p, s)| name_entry(&s.profile.card, &PlayerId::parse(p).ok()?))
                .filter(|e| e.starts_with(prefix) && after.is_none_or(|a| e.as_str() > a))
                .collect();
            entries.sort();
            let more = entries.len() > limit as usize;
            entries.truncate(limit as usize);
            NamePage {
                next: more.then(|| entries.last().cloned()).flatten(),
                players: entries.iter().filter_map(|e| entry_player(e)).collect(),
            }
        })
    }
}
