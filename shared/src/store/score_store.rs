//! [`ScoreStore`]: the source of truth (boards, families, standings, receipts, rebuild
//! checkpoints, rank sketches) and the values it takes and returns.

use std::future::Future;

use super::receipts::KeptReceipt;
use super::{
    AuditRecord, IndexEntry, MappingStore, ModerationStore, ProfileStore, SealStore,
    TournamentStore,
};
use crate::board::{Board, BoardStatus, Standing};
use crate::family::Family;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::rolling::Bucket;
use crate::score::Score;
use crate::store::StoreError;
use crate::tiebreak::Ties;

/// The stored outcome of one accepted submission, returned again on every retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The score the request carried (to spot a key reused with another payload).
    pub submitted: Score,
    /// The tie-break values the request carried, encoded (empty without columns).
    pub submitted_ties: Ties,
    /// The player's score on the board after this submission.
    pub score: Score,
    /// The standing's tie-break values after this submission, encoded.
    pub ties: Ties,
    pub previous_score: Option<Score>,
    pub update_applied: bool,
    /// Reached-at of `score`, ms since the epoch.
    pub updated_at: i64,
    /// The match that produced `score`.
    pub last_match_id: MatchId,
    /// The player's rank before this submission, when the caller asked for it.
    pub previous_rank: Option<u64>,
    /// The digest of the metadata the request carried ([`crate::profile::Metadata::digest`]),
    /// so that a retry with other metadata is a conflict, not a replay.
    pub metadata_digest: Option<String>,
    /// The result was an operator's correction (`op: set`): a retry must be one too.
    pub set: bool,
    /// A tournament result's attempt: the player's count of results in the occurrence
    /// as this result's write left it, which a retry answers again.
    pub attempt: Option<u32>,
}

/// One conditional write of the player's row: the new standing (if the fold applied)
/// and the receipt of this submission, kept in the row (see [`Row::keep`]).
#[derive(Debug)]
pub struct Commit<'a> {
    pub board: &'a LeaderboardId,
    pub player: &'a PlayerId,
    pub direction: Direction,
    /// The row as read: the write happens only if the row is still at its revision, and
    /// it keeps the row's receipts.
    pub row: &'a Row,
    /// The standing the row holds after the write: the new one if the fold applied,
    /// the current one if it did not (`receipt.receipt.update_applied` says which).
    pub standing: &'a Standing,
    /// This submission's receipt.
    pub receipt: KeptReceipt,
    /// Epoch seconds after which the board's Redis keys expire (closed windows).
    pub index_expire_at: Option<i64>,
    /// Whether the board keeps its rank order in DynamoDB (`Board::rank_index`): the
    /// row carries the `by_rank` key only then.
    pub ranked: bool,
    /// Epoch seconds now: receipts expired by then are dropped.
    pub now_s: i64,
    /// A tournament result's attempt, counted with the row or not at all.
    pub attempt: Option<AttemptCount<'a>>,
    /// A correction's audit record (`op: set`), written with the row or not at all.
    pub audit: Option<&'a AuditRecord>,
    /// On a rolling board: the row's buckets after this result.
    pub buckets: Option<Buckets<'a>>,
}

/// A rolling board's part of a row (docs/schedules.md): the live buckets of the
/// player's results, and when the first of them leaves the window (the row's place in
/// the `by_expiry` index, which the minute's sweep reads).
#[derive(Debug, Clone, Copy)]
pub struct Buckets<'a> {
    pub buckets: &'a [Bucket],
    pub next_expiry: Option<i64>,
}

/// A rolling board's row rewritten as its buckets leave the window: the standing they
/// now give (a new version, or the same one with fewer buckets), the receipts kept as
/// they are. Conditional on the row's revision, as every write of it is. (A row left
/// without a bucket becomes a tombstone instead: [`StandingStore::remove_standing`].)
#[derive(Debug)]
pub struct Roll<'a> {
    pub board: &'a LeaderboardId,
    pub player: &'a PlayerId,
    pub direction: Direction,
    pub row: &'a Row,
    pub standing: &'a Standing,
    pub buckets: Buckets<'a>,
    pub index_expire_at: Option<i64>,
    pub ranked: bool,
}

/// One attempt of a tournament result, counted on the player's membership of the
/// occurrence in the same transaction as the row's write: the result is written only
/// if the membership still holds `seen` attempts, and counted only if it is written, so
/// the count it leaves is exactly `seen + 1` (a count that moved meanwhile refuses the
/// write: [`CommitOutcome::AttemptRefused`], and the caller reads it again).
#[derive(Debug, Clone, Copy)]
pub struct AttemptCount<'a> {
    /// The tournament (for what a refusal says).
    pub tournament: &'a str,
    /// The occurrence (its board's id) whose membership counts the attempt.
    pub occurrence: &'a LeaderboardId,
    /// The attempts a member may make; `None`: unlimited (still counted).
    pub max: Option<u32>,
    /// The attempts the membership held when read (below `max`).
    pub seen: u32,
}

impl AttemptCount<'_> {
    /// The count this attempt leaves once written.
    pub fn after(&self) -> u32 {
        self.seen + 1
    }
}

/// A player's row on a board: their standing, if they have one, the row's version (a
/// removed standing leaves its version behind, so a later result starts the player over
/// at a newer version, which the index takes over the removal), and the receipts the
/// row keeps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Row {
    pub standing: Option<Standing>,
    /// `None`: the player never had a row on the board (or was erased).
    pub version: Option<u64>,
    /// Bumped by every write of the row, receipts included (`version` moves only with
    /// the standing); every write is conditional on it. `None` for no row, or for a row
    /// written before rows kept receipts.
    pub rev: Option<u64>,
    /// The receipts of the player's latest matches on the board, newest first.
    pub receipts: Vec<KeptReceipt>,
    /// On a rolling board: the buckets of the player's results in the window.
    pub buckets: Vec<Bucket>,
    /// Epoch seconds until which a receipt that left the row may still answer.
    pub archived_until: Option<i64>,
}

/// An operator's removal of a standing (or a ban's fence on a board where the player
/// has none yet): the row becomes a tombstone at the next version, keeping its receipts.
#[derive(Debug)]
pub struct Removal<'a> {
    pub board: &'a LeaderboardId,
    pub player: &'a PlayerId,
    pub direction: Direction,
    /// The row as read: the removal happens only if it is still at its revision.
    pub row: &'a Row,
    pub removed_at: i64,
    pub index_expire_at: Option<i64>,
}

impl Removal<'_> {
    /// The tombstone's version: the one after the row's.
    pub fn version(&self) -> u64 {
        self.row.version.map_or(1, |v| v + 1)
    }

    /// The index entry that takes the player off the board at the tombstone's version.
    pub fn index_entry(&self) -> IndexEntry {
        let kind = super::EntryKind::Removed;
        IndexEntry::removal(
            self.board,
            self.direction,
            self.player,
            self.version(),
            self.index_expire_at,
            kind,
        )
    }
}

/// Whether a conditional write happened. Nothing was written when it did not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    Committed,
    /// Another write changed the row since it was read.
    StandingChanged,
    /// The result's attempt could not be counted: the player is not a member of the
    /// occurrence, or its count is no longer the one read (another result counted, or
    /// none are left).
    AttemptRefused,
}

/// How a read sees the latest writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consistency {
    /// Every write that completed before the read.
    Strong,
    /// Possibly not the last second's writes; half the read units.
    Eventual,
}

/// One page of the board list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardPage {
    pub boards: Vec<Board>,
    /// Where the next page starts (the last sort key read), if there is one.
    pub next: Option<String>,
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

/// Boards and families: their definitions, status and list.
pub trait BoardStore: Send + Sync {
    fn get_board(
        &self,
        lb: &LeaderboardId,
    ) -> impl Future<Output = Result<Option<Board>, StoreError>> + Send;

    /// Creates `board` unless one with its id exists; returns the existing one if so.
    fn create_board(
        &self,
        board: &Board,
    ) -> impl Future<Output = Result<Option<Board>, StoreError>> + Send;

    /// Moves a board from `from` to `to`; false if its stored status is no longer `from`.
    fn set_status(
        &self,
        lb: &LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Boards whose list key (`{game}#{mode}#{board}`) starts with `prefix`, after the
    /// list key `after`, at most `limit`.
    fn list_boards(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: u32,
    ) -> impl Future<Output = Result<BoardPage, StoreError>> + Send;

    fn get_family(
        &self,
        game: &str,
        mode: &str,
    ) -> impl Future<Output = Result<Option<Family>, StoreError>> + Send;

    /// Creates `family` unless one exists for its game and mode; returns that one if so.
    /// Either way the family is in the list of families afterwards.
    fn create_family(
        &self,
        family: &Family,
    ) -> impl Future<Output = Result<Option<Family>, StoreError>> + Send;

    /// Families by `{game}#{mode}`, after `after`, at most `limit` (the window events'
    /// sweep).
    fn list_families(
        &self,
        after: Option<&str>,
        limit: u32,
    ) -> impl Future<Output = Result<FamilyPage, StoreError>> + Send;
}

/// One page of the list of families.
#[derive(Debug, Clone, Default)]
pub struct FamilyPage {
    pub families: Vec<Family>,
    /// Where the next page starts, if there is one.
    pub next: Option<String>,
}

/// Standings and receipts: the idempotent write path.
pub trait StandingStore: Send + Sync {
    fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<Standing>, StoreError>> + Send;

    /// The metadata of the standings of (board, player) `rows`, in the order asked
    /// (`None`: no standing, or its result carried none): one BatchGetItem per 100.
    /// Eventually consistent: for rows read from the rank order, which is itself
    /// eventually consistent, or from sealed windows, which no longer change.
    fn get_metadata(
        &self,
        rows: &[(LeaderboardId, PlayerId)],
    ) -> impl Future<Output = Result<Vec<Option<crate::profile::Metadata>>, StoreError>> + Send;

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
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<RankKey>, StoreError>> + Send;

    /// Up to `limit` standings strictly before `before`, in rank order (closest last).
    fn ranked_before(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        before: &RankKey,
        limit: u64,
    ) -> impl Future<Output = Result<Vec<RankKey>, StoreError>> + Send;

    /// Up to `limit` standings of one write shard in rank order, strictly after `after`:
    /// a walk over a whole board merges its shards (each standing read once).
    fn shard_after(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
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
        lb: &LeaderboardId,
        dir: Direction,
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
        after: Option<&str>,
        limit: u32,
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
/// part is its own trait, implemented in its own file by each adapter; a use case asks
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
