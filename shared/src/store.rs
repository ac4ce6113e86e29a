//! The ports the use cases depend on: [`ScoreStore`] (the source of truth), [`RankIndex`]
//! (the rebuildable ranking index) and [`FriendsSource`] (the social graph).
//!
//! Adapters: [`crate::dynamodb::DynamoScoreStore`], [`crate::redis::RedisRankIndex`],
//! [`crate::social::HttpFriendsSource`].

use std::future::Future;

use crate::board::{Board, BoardStatus, Standing};
use crate::error::{FriendsError, IndexError, QueueError, StoreError};
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::score::Score;
use crate::window::Family;

/// The stored outcome of one accepted submission, returned again on every retry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    /// The score the request carried (to spot a key reused with another payload).
    pub submitted: Score,
    /// The player's score on the board after this submission.
    pub score: Score,
    pub previous_score: Option<Score>,
    pub update_applied: bool,
    /// Reached-at of `score`, ms since the epoch.
    pub updated_at: i64,
    /// The match that produced `score`.
    pub last_match_id: MatchId,
    /// The player's rank before this submission, when the caller asked for it.
    pub previous_rank: Option<u64>,
}

/// One conditional write: the receipt, and the new standing if the fold applied.
#[derive(Debug)]
pub struct Commit<'a> {
    pub board: &'a LeaderboardId,
    pub player: &'a PlayerId,
    pub match_id: &'a MatchId,
    pub direction: Direction,
    /// Version the standing must still have (`None`: the player must have no row yet).
    pub expected_version: Option<u64>,
    /// The new standing, or `None` when the submission changes nothing.
    pub standing: Option<&'a Standing>,
    pub receipt: &'a Receipt,
    /// Epoch seconds after which the receipt may be deleted (DynamoDB TTL).
    pub receipt_expires_at: i64,
    /// Epoch seconds after which the board's Redis keys expire (closed windows).
    pub index_expire_at: Option<i64>,
}

/// Why a conditional commit did not happen. Nothing was written in any of these cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitOutcome {
    Committed,
    /// A receipt for this (board, player, match) exists: the request is a retry.
    ReceiptExists,
    /// Another write changed the standing since it was read.
    StandingChanged,
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

/// The source of truth: boards, families, standings and receipts.
pub trait ScoreStore: Send + Sync {
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
    fn create_family(
        &self,
        family: &Family,
    ) -> impl Future<Output = Result<Option<Family>, StoreError>> + Send;

    fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Option<Standing>, StoreError>> + Send;

    fn get_receipt(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        match_id: &MatchId,
    ) -> impl Future<Output = Result<Option<Receipt>, StoreError>> + Send;

    /// Writes the receipt and the standing in one transaction, only if no receipt
    /// exists for the key and the standing still has the expected version.
    ///
    /// The board's status is deliberately not part of the transaction: at 10K writes/s
    /// a condition on the one board item would make it the hottest key of the table.
    /// Callers check the (briefly cached) board definition instead.
    fn commit(
        &self,
        commit: &Commit<'_>,
    ) -> impl Future<Output = Result<CommitOutcome, StoreError>> + Send;

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

    /// The current key of each player, `None` for players without a standing.
    fn keys_of(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<Option<RankKey>>, StoreError>> + Send;

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

/// One standing as the rank index stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub board: LeaderboardId,
    pub direction: Direction,
    pub key: RankKey,
    pub version: u64,
    /// Epoch seconds at which the board's keys expire (closed windows), if ever.
    pub expire_at: Option<i64>,
}

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
    /// 1-based rank of the player's current entry.
    pub rank: u64,
    pub total: u64,
    /// The board's index health at the time: `rank` is only meaningful when Ready.
    pub health: Health,
}

/// A slice of a board around one player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Around {
    /// 1-based rank of the player.
    pub rank: u64,
    pub total: u64,
    /// 1-based rank of `entries[0]`.
    pub first_rank: u64,
    pub entries: Vec<RankKey>,
    /// The ranks are estimates (a big board read from DynamoDB).
    pub rank_approximate: bool,
    /// The total is an estimate.
    pub total_approximate: bool,
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
}

/// The ranking index. Every method is one round trip; applies are version-checked.
/// Reads of a board whose index is not [`Health::Ready`] fail with
/// [`IndexError::NotReady`], so no caller can take a partial index for the truth.
pub trait RankIndex: Send + Sync {
    /// Applies one standing if its version is newer, and returns the player's placement.
    fn apply(
        &self,
        entry: &IndexEntry,
    ) -> impl Future<Output = Result<Placement, IndexError>> + Send;

    /// Applies many standings in one pipelined round trip.
    fn apply_many(
        &self,
        entries: &[IndexEntry],
    ) -> impl Future<Output = Result<BatchApplied, IndexError>> + Send;

    /// The player's rank and up to `k` entries on each side; `None` if not on the board.
    fn around(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        player: &PlayerId,
        k: u64,
    ) -> impl Future<Output = Result<Option<Around>, IndexError>> + Send;

    /// The best `n` entries and the board's size.
    fn top(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        n: u64,
    ) -> impl Future<Output = Result<(Vec<RankKey>, u64), IndexError>> + Send;

    /// One page in rank order: entries strictly after `after` (from the top if `None`),
    /// the 0-based rank of the first entry, and the board's size.
    fn page(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> impl Future<Output = Result<(u64, Vec<RankKey>, u64), IndexError>> + Send;

    /// The current key of each player, `None` for players without a score.
    fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<Option<RankKey>>, IndexError>> + Send;

    /// Marks a new (empty) board's index complete. `expire_at`: epoch seconds, if any.
    fn init_board(
        &self,
        lb: &LeaderboardId,
        expire_at: Option<i64>,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;

    /// The index health of each board.
    fn health(
        &self,
        boards: &[LeaderboardId],
    ) -> impl Future<Output = Result<Vec<Health>, IndexError>> + Send;

    /// Starts (or, when `fresh` is false and the marker still names `gen`, resumes) a
    /// rebuild; from now on every apply also writes the rebuild's keys. Returns true
    /// when resuming.
    fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        fresh: bool,
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
        lb: &LeaderboardId,
        dir: Direction,
        marks: u64,
        min_size: u64,
    ) -> impl Future<Output = Result<RankSketch, IndexError>> + Send;

    /// The board's top window for a reader holding version `known`: only the version and
    /// size when `known` is current, the first [`TOP_WINDOW`] entries too otherwise.
    fn top_window(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        known: Option<&str>,
    ) -> impl Future<Output = Result<TopWindow, IndexError>> + Send;

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

/// Shared counters for rate limits (fixed windows that start with their first hit).
pub trait RateCounter: Send + Sync {
    /// Counts one hit on each key; per key, the hits in its current window and the ms
    /// until that window ends. One round trip.
    fn hit(
        &self,
        keys: &[String],
        window: std::time::Duration,
    ) -> impl Future<Output = Result<Vec<(u64, u64)>, IndexError>> + Send;
}

/// A board whose rank index needs a rebuild, as reported to the repair queue (the body
/// of one SQS message).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RebuildNeeded {
    pub rebuild: LeaderboardId,
    /// The index health the reporter saw.
    pub health: Health,
}

/// Where boards whose index needs a rebuild are reported (the repair queue). Boxed
/// futures: the port is optional in a [`crate::service::Context`] and held as a trait
/// object there.
pub trait RepairQueue: Send + Sync {
    fn report<'a>(
        &'a self,
        need: &'a RebuildNeeded,
    ) -> futures::future::BoxFuture<'a, Result<(), QueueError>>;
}

/// Where a range of the table's stream is (what a failed batch's on-failure record
/// names): one shard, from `start` to `end` inclusive.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StreamRange {
    pub stream_arn: String,
    pub shard_id: String,
    pub start: String,
    pub end: String,
}

/// The table's stream, read again by the repair.
pub trait StreamSource: Send + Sync {
    /// The records of `range`, oldest first, as Lambda would deliver them; `None` when
    /// they can no longer be read (trimmed after the stream's 24 hours, or the shard is
    /// gone).
    fn read_range(
        &self,
        range: &StreamRange,
    ) -> impl Future<
        Output = Result<Option<Vec<aws_lambda_events::event::dynamodb::EventRecord>>, StoreError>,
    > + Send;
}

/// Who a player's friends are.
pub trait FriendsSource: Send + Sync {
    fn friends_of(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Vec<PlayerId>, FriendsError>> + Send;
}
