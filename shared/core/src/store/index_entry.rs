//! [`IndexEntry`]: one change of a player's place on a board, as the rank index applies
//! it (a standing, a removal, an erasure), version-checked.

use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{Direction, RankKey};
use leaderboard_rules::profile::Metadata;

/// One change of a player's place on a board, as the rank index applies it: usually a
/// standing; an operator's removal or an erasure take the player off the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub board: LeaderboardId,
    pub direction: Direction,
    /// The standing's key (for a removal or an erasure only `player` means anything).
    pub key: RankKey,
    pub version: u64,
    /// Epoch seconds at which the board's keys expire (closed windows), if ever.
    pub expire_at: Option<i64>,
    pub kind: EntryKind,
    /// The standing's metadata (see [`leaderboard_rules::board::Standing::metadata`]), kept with
    /// the entry and shown on its row.
    pub metadata: Option<Metadata>,
}

/// What an [`IndexEntry`] does to the player's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EntryKind {
    /// The player stands at `key` (from version `version` on).
    #[default]
    Standing,
    /// An operator removed the standing at `version`: the entry leaves the index, which
    /// keeps a tombstone so that no older change can bring it back; a newer standing
    /// (a later result) starts the player over.
    Removed,
    /// The player was erased: the entry leaves the index and nothing of the player is
    /// kept (no tombstone).
    Erased,
}

impl IndexEntry {
    /// The entry of `player`'s standing `s` on `board`.
    pub fn standing(
        board: &LeaderboardId,
        direction: Direction,
        player: &str,
        s: &leaderboard_rules::board::Standing,
        expire_at: Option<i64>,
    ) -> Self {
        Self {
            board: board.clone(),
            direction,
            key: s.key(player),
            version: s.version,
            expire_at,
            kind: EntryKind::Standing,
            metadata: s.metadata.clone(),
        }
    }

    /// The entry that takes `player` off `board` (`kind` [`EntryKind::Removed`] or
    /// [`EntryKind::Erased`]) at `version`.
    pub fn removal(
        board: &LeaderboardId,
        direction: Direction,
        player: &PlayerId,
        version: u64,
        expire_at: Option<i64>,
        kind: EntryKind,
    ) -> Self {
        Self {
            board: board.clone(),
            direction,
            key: RankKey {
                score: leaderboard_rules::score::Score::ZERO,
                ties: leaderboard_rules::tiebreak::Ties::none(),
                reached_at: 0,
                player: player.to_string(),
            },
            version,
            expire_at,
            kind,
            metadata: None,
        }
    }
}
