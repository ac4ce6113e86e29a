//! The ports the use cases depend on: [`ScoreStore`] (the source of truth), [`RankIndex`]
//! (the rebuildable ranking index) and [`FriendsSource`] (the social graph).
//!
//! Adapters: [`crate::dynamodb::DynamoScoreStore`], [`crate::redis::RedisRankIndex`],
//! [`crate::social::HttpFriendsSource`].

use std::future::Future;

use crate::board::{Board, Standing};
use crate::error::{FriendsError, IndexError, StoreError};
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::score::Score;

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

/// The source of truth: boards, standings and receipts.
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
}

/// One standing as the rank index stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexEntry {
    pub board: LeaderboardId,
    pub direction: Direction,
    pub key: RankKey,
    pub version: u64,
}

/// Where a player stands after an apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// False when the index already held this or a newer version.
    pub applied: bool,
    /// 1-based rank of the player's current entry.
    pub rank: u64,
    pub total: u64,
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
}

/// The ranking index. Every method is one round trip; applies are version-checked.
pub trait RankIndex: Send + Sync {
    /// Applies one standing if its version is newer, and returns the player's placement.
    fn apply(
        &self,
        entry: &IndexEntry,
    ) -> impl Future<Output = Result<Placement, IndexError>> + Send;

    /// Applies many standings in one pipelined round trip; `true` where one applied.
    fn apply_many(
        &self,
        entries: &[IndexEntry],
    ) -> impl Future<Output = Result<Vec<bool>, IndexError>> + Send;

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

    /// The current key of each player, `None` for players without a score.
    fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> impl Future<Output = Result<Vec<Option<RankKey>>, IndexError>> + Send;
}

/// Who a player's friends are.
pub trait FriendsSource: Send + Sync {
    fn friends_of(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Vec<PlayerId>, FriendsError>> + Send;
}
