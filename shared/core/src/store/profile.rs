//! [`ProfileStore`]: players' profiles, the source of truth of the names every row
//! shows (the rank index keeps a copy of each card, see [`super::RankIndex::cards`]).

use leaderboard_rules::page::Paging;
use std::future::Future;

use crate::store::{CommitOutcome, StoreError};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::profile::{Card, Profile, search_key};

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

/// The name index's entry of a player whose card has a name: the name's
/// [`search_key`], U+0001, the player. No name holds U+0001 (a control character), and
/// it sorts before every character one may hold, so `ana` comes before `ana b`. `None`
/// for a card without a name (or a name of marks only): such a player is not found.
pub fn name_entry(card: &Card, player: &PlayerId) -> Option<String> {
    let key = search_key(card.display_name.as_deref()?);
    (!key.is_empty()).then(|| format!("{key}\u{1}{player}"))
}

/// The player an entry of the name index names.
pub fn entry_player(entry: &str) -> Option<PlayerId> {
    let (_, player) = entry.rsplit_once('\u{1}')?;
    PlayerId::parse(player).ok()
}

/// One page of players found by a prefix of their name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamePage {
    pub players: Vec<PlayerId>,
    /// The last entry read, when more may follow.
    pub next: Option<String>,
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

    /// Up to `limit` players whose [`name_entry`] starts with `prefix` (a search key, not
    /// empty), in entry order, after the entry `after`. An index, not a scan: what a
    /// page costs does not grow with the players. It may lag a rename by a moment (the
    /// caller reads the cards it shows).
    fn find_names(
        &self,
        prefix: &str,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<NamePage, StoreError>> + Send;
}
