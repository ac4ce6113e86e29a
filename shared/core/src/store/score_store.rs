//! [`ScoreStore`]: the source of truth (boards and families, `super::board_store`;
//! standings, receipts, rebuild checkpoints, rank sketches) and the values it takes and
//! returns.

use leaderboard_rules::page::Paging;
use std::future::Future;

use super::row::{Commit, CommitOutcome, Receipt, Removal, Roll, Row};
use super::{
    BoardStore, HeldStore, IndexEntry, MappingStore, ModerationStore, ProfileStore, RewardStore,
    SealStore, TournamentStore,
};
use crate::store::StoreError;
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::{BoardOrder, RankKey};

/// How a read sees the latest writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// Every write that completed before the read.
    Strong,
    /// Possibly not the last second's writes; half the read units.
    Eventual,
}

/// Where a resumable rebuild of one board stands.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Checkpoint {
    /// Names this rebuild's keys in Redis (the marker's `gen`).
    pub gen_id: String,
    /// The next write shard to read, and where in it.
    pub shard: u64,
    pub after: Option<String>,
    /// Standings loaded so far.
    pub loaded: u64,
    pub started_at: i64,
}

/// Standings and receipts: the idempotent write path.
pub trait StandingStore: Send + Sync {
    /// The player's standing on the board: their row, read strongly.
    fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<Standing>, StoreError>> + Send {
        async move {
            let row = self.get_row(lb, player, Consistency::Strong).await?;
            Ok(row.standing)
        }
    }

    /// The metadata of the standings of (board, player) `rows`, in the order asked
    /// (`None`: no standing, or its result carried none): one BatchGetItem per 100.
    /// Eventually consistent: for rows read from the rank order, which is itself
    /// eventually consistent, or from sealed windows, which no longer change.
    fn get_metadata(
        &self,
        rows: &[(LeaderboardId, PlayerId)],
    ) -> impl Future<Output = Result<Vec<Option<leaderboard_rules::profile::Metadata>>, StoreError>> + Send;

    /// The player's row: their standing, its version and receipts (see [`Row`]).
    /// [`Consistency::Eventual`] costs half a strong read and may be stale; a write
    /// conditional on a stale row's revision fails, so nothing goes wrong, it retries.
    fn get_row(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        consistency: Consistency,
    ) -> impl Future<Output = Result<Row, StoreError>> + Send;

    /// Replaces the row with its tombstone, only if it is still at the revision read
    /// ([`CommitOutcome::StandingChanged`] otherwise). Receipts stay.
    fn remove_standing(
        &self,
        removal: &Removal<'_>,
    ) -> impl Future<Output = Result<CommitOutcome, StoreError>> + Send;

    /// Deletes the player's row (standing or tombstone) and every receipt of theirs on
    /// the board; returns the row's version if there was one. Idempotent.
    fn erase_player(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<u64>, StoreError>> + Send;

    /// A receipt that left its row (see [`Row::keep`]), or one written before
    /// rows kept receipts.
    fn get_receipt(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        match_id: &MatchId,
    ) -> impl Future<Output = Result<Option<Receipt>, StoreError>> + Send;

    /// Writes the row with the new standing (if any) and the receipt, only if the row is
    /// still at the revision read: one conditional write of one item. The receipts that
    /// leave the row ([`Row::keep`]) are written as items of their own first, so a crash
    /// between the two leaves a receipt twice, never none.
    ///
    /// The board's status is deliberately not part of the condition: at 10K writes/s a
    /// condition on the one board item would make it the hottest key of the table.
    /// Callers check the (briefly cached) board definition instead.
    fn commit(
        &self,
        commit: &Commit<'_>,
    ) -> impl Future<Output = Result<CommitOutcome, StoreError>> + Send;

    /// Rewrites a rolling board's row as its buckets leave (see [`Roll`]).
    fn roll(
        &self,
        roll: &Roll<'_>,
    ) -> impl Future<Output = Result<CommitOutcome, StoreError>> + Send;

    /// The players of `lb`'s rows whose first bucket leaves the window at or before
    /// `now` (the `by_expiry` index: one shard, after `after`, at most `limit`).
    fn expiring(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        now: i64,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<PlayerId>, StoreError>> + Send;
}

/// Standings in rank order, served by the `by_rank` index: history and degraded reads.
pub trait RankedReads: Send + Sync {
    /// Up to `limit` standings in rank order, strictly after `after` (from the top if
    /// `None`). Served by the rank-ordered index; for history and degraded reads.
    fn ranked_after(
        &self,
        on: BoardOrder<'_>,
        after: Option<&RankKey>,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<RankKey>, StoreError>> + Send;

    /// Up to `limit` standings strictly before `before`, in rank order (closest last).
    fn ranked_before(
        &self,
        on: BoardOrder<'_>,
        before: &RankKey,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<RankKey>, StoreError>> + Send;

    /// Up to `limit` standings of one write shard in rank order, strictly after `after`:
    /// a walk over a whole board merges its shards (each standing read once).
    fn shard_after(
        &self,
        on: BoardOrder<'_>,
        shard: u64,
        after: Option<&RankKey>,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<RankKey>, StoreError>> + Send;

    /// The current key of each player, `None` for players without a standing.
    fn keys_of(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<Option<RankKey>>, StoreError>> + Send;

    /// How many standings rank strictly before `before` (all of them if `None`),
    /// counting at most about `cap` of them: the cost of a count is bounded whatever the
    /// board's size, and a count that reached its cap says so.
    fn count_before(
        &self,
        on: BoardOrder<'_>,
        before: Option<&RankKey>,
        cap: u64,
    ) -> impl Future<Output = Result<Count, StoreError>> + Send;
}

/// What a rebuild reads (every standing, shard by shard) and where it keeps its place.
pub trait RebuildStore: Send + Sync {
    /// Number of write shards a board's standings are spread over.
    fn shard_count(&self) -> u64;

    /// One page of the standings of one write shard, as index entries, after the
    /// standing key `after`; the second value is where the next page starts.
    fn standings_page(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<(Vec<IndexEntry>, Option<String>), StoreError>> + Send;

    fn get_checkpoint(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<Option<Checkpoint>, StoreError>> + Send;

    fn put_checkpoint(
        &self,
        lb: &LeaderboardId,
        checkpoint: &Checkpoint,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn delete_checkpoint(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// A big board's rank sketch, for ranks estimated past the count cap.
pub trait SketchStore: Send + Sync {
    /// The board's rank sketch, if one was stored.
    fn get_sketch(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<Option<RankSketch>, StoreError>> + Send;

    fn put_sketch(
        &self,
        lb: &LeaderboardId,
        sketch: &RankSketch,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// The source of truth: boards, families, standings and receipts, in one table. Each
/// part is its own trait, implemented in its own file by each adapter. A use case asks
/// for the parts it uses (`S: BoardStore + StandingStore`, say), so its signature says
/// what it reads and writes; a function's handler, which routes to many use cases, asks
/// for the whole store.
pub trait ScoreStore:
    BoardStore
    + StandingStore
    + RankedReads
    + RebuildStore
    + SketchStore
    + ModerationStore
    + SealStore
    + MappingStore
    + ProfileStore
    + TournamentStore
    + HeldStore
    + RewardStore
{
}

impl<T> ScoreStore for T where
    T: BoardStore
        + StandingStore
        + RankedReads
        + RebuildStore
        + SketchStore
        + ModerationStore
        + SealStore
        + MappingStore
        + ProfileStore
        + TournamentStore
        + HeldStore
        + RewardStore
{
}

/// What every read of a board uses: its definition, the player's own row, the rows in
/// rank order (when the index cannot answer), the rank sketch (approximate ranks) and
/// the players' cards (names on rows).
pub trait ReadStore: BoardStore + StandingStore + RankedReads + SketchStore + ProfileStore {}

impl<T> ReadStore for T where
    T: BoardStore + StandingStore + RankedReads + SketchStore + ProfileStore
{
}

/// What recording a result uses: the board, the player's row, the bans and the
/// tournament's membership and attempts.
pub trait IngestStore:
    BoardStore + StandingStore + ModerationStore + TournamentStore + HeldStore
{
}

impl<T> IngestStore for T where
    T: BoardStore + StandingStore + ModerationStore + TournamentStore + HeldStore
{
}

/// A count that may have stopped at its cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Count {
    pub n: u64,
    /// False when the count reached its cap: `n` is then a lower bound.
    pub exact: bool,
}

/// Where a board's ranks fell when it was last sketched: marks at evenly spaced ranks,
/// each with the rank-ordered sort key ([`RankKey::sort_key`]) of the entry there. It
/// answers "how many rank before this key" for reads served from DynamoDB, where
/// counting would cost time and capacity in proportion to the rank.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RankSketch {
    /// When it was taken, ms since the epoch.
    pub at: i64,
    /// The board's size then.
    pub total: u64,
    /// 0-based rank of each mark, ascending.
    pub ranks: Vec<u64>,
    /// The sort key of the entry at each mark.
    pub keys: Vec<String>,
}

impl RankSketch {
    /// How many entries ranked before the entry with sort key `key` when the sketch was
    /// taken, estimated as the middle of the gap between the marks around it: off by at
    /// most half that gap (`total / marks`), plus what changed since `at`.
    pub fn before(&self, key: &str) -> u64 {
        let marks = self.ranks.len().min(self.keys.len());
        let p = self.keys[..marks].partition_point(|k| k.as_str() < key);
        // Entries before `key`: more than the last mark below it, at most the next mark.
        let lo = if p == 0 { 0 } else { self.ranks[p - 1] + 1 };
        let hi = if p == marks {
            self.total
        } else {
            self.ranks[p]
        };
        lo + hi.saturating_sub(lo) / 2
    }
}
