//! [`RankIndex`]: the rebuildable ranking index by role, and the values its writes and
//! upkeep take and return (what its reads answer is in `index_reads`).

use std::future::Future;

use super::{
    Around, IndexEntry, PageAt, PlayerRows, RankSketch, RowCards, RowMetadata, Slice, TopWindow,
    VersionedCard,
};
use crate::store::IndexError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, RankKey, RankMode};

/// Whether the index holds a board completely.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Complete: reads can trust it.
    Ready,
    /// A rebuild is loading the board; reads must not trust the live keys yet.
    Rebuilding,
    /// The index may lack writes it once held: the node restarted, a replica was
    /// promoted, the board's keys moved to another node or were split apart, or a range
    /// of the stream was lost. Needs a rebuild.
    Stale,
    /// No marker: wiped, expired, or never initialised. Needs a rebuild (unless empty).
    Missing,
}

/// What a batched apply did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchApplied {
    /// Per entry, in order: whether it applied (false: the index held this version or a
    /// newer one).
    pub applied: Vec<bool>,
    /// The boards of the batch whose index is not [`Health::Ready`].
    pub unready: Vec<(LeaderboardId, Health)>,
}

/// Where a player stands after an apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// False when the index already held this or a newer version.
    pub applied: bool,
    /// The player's place; `None` when they are not on the board after the apply (it
    /// lost to a newer removal: the board's truth is "not ranked", not an outage).
    pub place: Option<Place>,
    /// The board's index health at the time: `place` is only meaningful when Ready.
    pub health: Health,
}

/// A player's 1-based rank on a board of `total` players.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    pub rank: u64,
    pub total: u64,
}

/// How a rebuild begins ([`IndexUpkeep::begin_rebuild`]), named at the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RebuildStart {
    /// Start again even when the marker still names the same generation (else resume).
    pub fresh: bool,
    /// Whether the rebuilt index keeps the board's distinct scores (dense ranks).
    pub dense_ranks: bool,
}

/// The ranking index, by role: [`IndexWrites`], [`IndexReads`], [`CardCopies`] and
/// [`IndexUpkeep`] (and where a tournament's next seat comes from, [`super::SeatHints`]).
/// Every method is one round trip; applies are version-checked. Reads of a board whose
/// index is not [`Health::Ready`] fail with [`IndexError::NotReady`], so no caller can
/// take a partial index for the truth. A use case names the roles it needs; one that
/// needs them all names this.
pub trait RankIndex:
    IndexWrites + IndexReads + CardCopies + IndexUpkeep + super::SeatHints
{
}

impl<T> RankIndex for T where
    T: IndexWrites + IndexReads + CardCopies + IndexUpkeep + super::SeatHints
{
}

/// The index's writes: standings applied, version-checked, and a new board marked
/// complete.
pub trait IndexWrites: Send + Sync {
    /// Applies one standing if its version is newer, and returns the player's placement.
    fn apply(
        &self,
        entry: &IndexEntry,
    ) -> impl Future<Output = Result<Placement, IndexError>> + Send;

    /// [`Self::apply`] of each entry, each answering its player's placement just after
    /// it; an index over the network sends them in one round trip per cluster slot.
    /// Entries of one player on one board apply in order.
    fn apply_each(
        &self,
        entries: &[IndexEntry],
    ) -> impl Future<Output = Result<Vec<Placement>, IndexError>> + Send {
        async move {
            let mut out = Vec::with_capacity(entries.len());
            for entry in entries {
                out.push(self.apply(entry).await?);
            }
            Ok(out)
        }
    }

    /// Applies many standings in one pipelined round trip.
    fn apply_many(
        &self,
        entries: &[IndexEntry],
    ) -> impl Future<Output = Result<BatchApplied, IndexError>> + Send;

    /// Marks a new (empty) board's index complete. `expire_at`: epoch seconds, if any;
    /// `dense_ranks`: whether the index keeps the board's distinct scores (every apply
    /// follows what the board's marker says from then on).
    fn init_board(
        &self,
        lb: &LeaderboardId,
        expire_at: Option<i64>,
        dense_ranks: bool,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;
}

/// The index's reads of a board in rank order. A board whose index is not
/// [`Health::Ready`] fails them with [`IndexError::NotReady`].
pub trait IndexReads: Send + Sync {
    /// The player's rank and up to `k` entries on each side, the first one's place under
    /// `mode` read in the same step; `None` if not on the board.
    fn around(
        &self,
        on: BoardOrder<'_>,
        player: &PlayerId,
        k: u64,
        mode: RankMode,
    ) -> impl Future<Output = Result<Option<Around>, IndexError>> + Send;

    /// The best `n` entries and the board's size.
    fn top(
        &self,
        on: BoardOrder<'_>,
        n: u64,
    ) -> impl Future<Output = Result<(Vec<RankKey>, u64), IndexError>> + Send {
        async move {
            let (keys, total, _, _) = self.top_named(on, n).await?;
            Ok((keys, total))
        }
    }

    /// [`Self::top`] with the entries' cards and metadata, if this index reads them with
    /// the rows.
    fn top_named(
        &self,
        on: BoardOrder<'_>,
        n: u64,
    ) -> impl Future<Output = Result<(Vec<RankKey>, u64, RowCards, RowMetadata), IndexError>> + Send;

    /// One page of up to `limit` entries in rank order, starting `at`, with the first
    /// one's place under `mode` and each one's stamp.
    fn page(
        &self,
        on: BoardOrder<'_>,
        at: PageAt<'_>,
        limit: u64,
        mode: RankMode,
    ) -> impl Future<Output = Result<Slice, IndexError>> + Send;

    /// The rows of `players` who are on the board (rank, place under `mode`, key), in
    /// the order asked, and the board's size.
    fn rows_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
        mode: RankMode,
    ) -> impl Future<Output = Result<PlayerRows, IndexError>> + Send;

    /// The current key of each player, `None` for players without a score, and each
    /// player's metadata (as [`RowMetadata`], read with the keys).
    fn keys_of(
        &self,
        on: BoardOrder<'_>,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<(Vec<Option<RankKey>>, RowMetadata), IndexError>> + Send;

    /// The board's top window for a reader holding version `known`: only the version and
    /// size when `known` is current, the first [`super::TOP_WINDOW`] entries too otherwise;
    /// and the cards of the window's first `named` entries, if this index reads them
    /// with the rows: always when the window moved, and while it is current unless
    /// `cards_held` (the reader holds fresh copies of those cards for `known`).
    fn top_window(
        &self,
        on: BoardOrder<'_>,
        known: Option<&str>,
        named: u64,
        cards_held: bool,
    ) -> impl Future<Output = Result<TopWindow, IndexError>> + Send;

    /// The metadata the index keeps with the players' entries on `lb`, in the order
    /// asked (`None` inside: no entry, or no metadata); `None` as a whole when this index
    /// keeps none (the caller reads the standings).
    fn row_metadata(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<RowMetadata, IndexError>> + Send;
}

/// The index's copies of players' cards, kept beside the boards for the names a read
/// shows.
pub trait CardCopies: Send + Sync {
    /// The index's copies of the players' cards, in the order asked (`None`: no copy).
    /// One round trip (on a cluster, one call per slot, all at once).
    fn cards(
        &self,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<Option<VersionedCard>>, IndexError>> + Send;

    /// Keeps each card as the player's copy unless the copy held is as new or newer: a
    /// profile's write, the stream's record of it, or a reader filling what it found
    /// missing from DynamoDB, in any order, leave the newest.
    fn put_cards(
        &self,
        cards: &[(PlayerId, VersionedCard)],
    ) -> impl Future<Output = Result<(), IndexError>> + Send;
}

/// What keeps the index whole: its health, the rebuild from the source of truth, the
/// repair reports and the rebuild's lease, the slot a board lives on and the sketch the
/// degraded reads count with.
pub trait IndexUpkeep: Send + Sync {
    /// The hash slot a board's keys live on (Redis Cluster's: CRC16/XMODEM of the
    /// board's hash tag, mod 16384), which names the shard serving it.
    fn slot_of(&self, lb: &LeaderboardId) -> u16;

    /// The index health of each board.
    fn health(
        &self,
        boards: &[LeaderboardId],
    ) -> impl Future<Output = Result<Vec<Health>, IndexError>> + Send;

    /// Starts (or, unless `start.fresh` and while the marker still names `gen_id`,
    /// resumes) a rebuild; from now on every apply also writes the rebuild's keys.
    /// Returns true when resuming.
    fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        start: RebuildStart,
    ) -> impl Future<Output = Result<bool, IndexError>> + Send;

    /// Loads snapshot entries into the rebuild's keys (version-checked), in one pipeline.
    fn load(
        &self,
        lb: &LeaderboardId,
        entries: &[IndexEntry],
    ) -> impl Future<Output = Result<(), IndexError>> + Send;

    /// Swaps the rebuild's keys in atomically and marks the board Ready; false if the
    /// marker no longer names `gen` (wiped meanwhile: start over).
    fn finish_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        expire_at: Option<i64>,
    ) -> impl Future<Output = Result<bool, IndexError>> + Send;

    /// Marks at `marks` evenly spaced ranks of the board (fewer on a smaller board), for
    /// reads served from DynamoDB; see [`RankSketch`]. A board of no more than `min_size`
    /// entries gets no marks (only its size).
    fn sketch(
        &self,
        on: BoardOrder<'_>,
        marks: u64,
        min_size: u64,
    ) -> impl Future<Output = Result<RankSketch, IndexError>> + Send;

    /// Claims the right to report the board for repair: true for the first caller in
    /// [`REPAIR_CLAIM`], false for everyone else meanwhile (they need not report it).
    fn claim_repair(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<bool, IndexError>> + Send;

    /// Marks each board's index [`Health::Stale`] (boards without a marker are left
    /// alone); returns how many were marked.
    fn mark_stale(
        &self,
        boards: &[LeaderboardId],
    ) -> impl Future<Output = Result<u64, IndexError>> + Send;

    /// Takes the board's rebuild lease for `ttl` (or renews it, when `owner` holds it
    /// already); false when another owner holds it.
    fn acquire_lease(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        ttl: std::time::Duration,
    ) -> impl Future<Output = Result<bool, IndexError>> + Send;

    /// Gives the lease back if `owner` still holds it.
    fn release_lease(
        &self,
        lb: &LeaderboardId,
        owner: &str,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;
}

/// How long one report of a board for repair stands before another may be sent (the
/// repair normally finishes well within it; if the report was lost, the next reader
/// reports again).
pub const REPAIR_CLAIM: std::time::Duration = std::time::Duration::from_secs(10);
