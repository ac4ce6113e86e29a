//! [`BoardStore`]: boards and families, their definitions, status, rules, resets and
//! lists, in the source of truth (part of `super::ScoreStore`).

use leaderboard_rules::page::Paging;
use std::future::Future;

use crate::store::StoreError;
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::integrity::Integrity;
use leaderboard_rules::reset::BoardReset;
use leaderboard_rules::reward::RewardTable;

/// One page of the board list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardPage {
    pub boards: Vec<Board>,
    /// Where the next page starts (the last sort key read), if there is one.
    pub next: Option<String>,
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

    /// Replaces a board's integrity rules (`None`: none); false if there is no board.
    fn set_integrity(
        &self,
        lb: &LeaderboardId,
        rules: Option<&Integrity>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Replaces a standalone board's reward table (`None`: none); false if there is no
    /// board.
    fn set_rewards(
        &self,
        lb: &LeaderboardId,
        table: Option<&RewardTable>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Stores `reset` as the board's latest if it may replace the stored one
    /// ([`BoardReset::may_replace`], the write's condition); false if it may not (another
    /// reset came first) or there is no board.
    fn set_reset(
        &self,
        lb: &LeaderboardId,
        reset: &BoardReset,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Replaces a family's integrity rules (its boards' are each their own); false if
    /// there is no family.
    fn set_family_integrity(
        &self,
        family: &Family,
        rules: Option<&Integrity>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Replaces a family's reward table; false if there is no family.
    fn set_family_rewards(
        &self,
        family: &Family,
        table: Option<&RewardTable>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Boards whose list key (`{game}#{mode}#{board}`) starts with `prefix`, after the
    /// list key `after`, at most `limit`.
    fn list_boards(
        &self,
        prefix: &str,
        page: Paging<'_>,
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
        page: Paging<'_>,
    ) -> impl Future<Output = Result<FamilyPage, StoreError>> + Send;
}

/// One page of the list of families.
#[derive(Debug, Clone, Default)]
pub struct FamilyPage {
    pub families: Vec<Family>,
    /// Where the next page starts, if there is one.
    pub next: Option<String>,
}
