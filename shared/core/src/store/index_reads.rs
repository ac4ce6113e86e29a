//! What the index's reads answer ([`super::IndexReads`]): a slice around a player, a page,
//! some players' rows, the top window, and the names and metadata read with them.

use super::VersionedCard;
use leaderboard_rules::order::RankKey;
use leaderboard_rules::profile::Metadata;

/// The index's copies of the cards of a read's rows, read with the rows (one round trip
/// on a single node): per row, in the rows' order, `None` where it holds no copy (never
/// filled, expired, or from another replication history). `None` as a whole when this
/// index did not read them with the rows (on a cluster they live in other slots): the
/// caller asks [`super::CardCopies::cards`].
pub type RowCards = Option<Vec<Option<VersionedCard>>>;

/// The metadata of a read's rows (see [`leaderboard_rules::board::Standing::metadata`]), read with
/// the rows from the board's own keys: per row, `None` where the standing has none.
/// `None` as a whole when this index keeps none (the caller reads the standings).
pub type RowMetadata = Option<Vec<Option<Metadata>>>;

/// A slice of a board around one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    /// 1-based rank of the player.
    pub rank: u64,
    pub total: u64,
    /// 1-based rank of `entries[0]`.
    pub first_rank: u64,
    /// The place of `entries[0]` under the [`RankMode`](leaderboard_rules::order::RankMode) asked for (`first_rank` for
    /// unique); the other entries' places follow from it ([`leaderboard_rules::order::places`]).
    pub first_place: u64,
    pub entries: Vec<RankKey>,
    /// The ranks are estimates (a big board read from DynamoDB).
    pub rank_approximate: bool,
    /// The total is an estimate.
    pub total_approximate: bool,
    /// The entries' cards, if read with them.
    pub cards: RowCards,
    /// The entries' metadata, if read with them.
    pub metadata: RowMetadata,
}

/// Where a page of a board starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageAt<'a> {
    /// At the top.
    Top,
    /// Strictly after this key.
    After(&'a RankKey),
    /// The last entries strictly before this key (a page walked back).
    Before(&'a RankKey),
    /// At this 0-based rank.
    Rank(u64),
}

impl<'a> From<Option<&'a RankKey>> for PageAt<'a> {
    /// After the key, or at the top without one (a forward walk's next page).
    fn from(after: Option<&'a RankKey>) -> Self {
        after.map_or(Self::Top, Self::After)
    }
}

/// One page of a board in rank order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// Entries before `entries[0]` (its 0-based rank).
    pub before: u64,
    /// The place of `entries[0]` under the [`RankMode`](leaderboard_rules::order::RankMode) asked for.
    pub first_place: u64,
    pub entries: Vec<RankKey>,
    /// The board's size.
    pub total: u64,
    /// Per entry, when it took its current place, in microseconds on [`Slice::clock`]'s
    /// clock (0: before the index kept stamps, i.e. long ago).
    pub stamps: Vec<i64>,
    /// The index's clock when the page was read, in microseconds: an entry whose stamp is
    /// not below it moved after the read (see `service::reads` on walks).
    pub clock: i64,
    /// The entries' cards, if read with them.
    pub cards: RowCards,
    /// The entries' metadata, if read with them.
    pub metadata: RowMetadata,
}

/// A player's row among [`PlayerRows`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRow {
    /// 1-based rank.
    pub rank: u64,
    /// The place under the [`RankMode`](leaderboard_rules::order::RankMode) asked for.
    pub place: u64,
    pub key: RankKey,
}

/// The rows of a list of players on a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerRows {
    /// The rows of the players who are on the board, in the order asked.
    pub rows: Vec<PlayerRow>,
    /// The board's size.
    pub total: u64,
    /// The rows' cards, if read with them.
    pub cards: RowCards,
    /// The rows' metadata, if read with them.
    pub metadata: RowMetadata,
}

/// How many of a board's best places the top window covers: every change inside it
/// moves the window's version on, so a reader's copy is current while the version is.
pub const TOP_WINDOW: u64 = 1_000;

/// A reader's view of a board's top window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopWindow {
    /// Moves on whenever the first [`TOP_WINDOW`] places change.
    pub version: String,
    /// The board's size now.
    pub total: u64,
    /// The window's entries, unless the reader's version is still current.
    pub entries: Option<Vec<RankKey>>,
    /// The index's clock at the read, as [`Slice::clock`].
    pub clock: i64,
    /// The cards of the window's first `named` entries (see [`super::IndexReads::top_window`]).
    pub cards: RowCards,
    /// Their metadata, sent with the cards (and held with them).
    pub metadata: RowMetadata,
}
