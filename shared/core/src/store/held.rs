//! [`HeldStore`]: the review queue of results held by an integrity rule
//! (docs/integrity.md). A result is held, and released by an operator's decision, in
//! the same transaction as its row's write ([`crate::store::Commit::queue`]), so the
//! queue and the rows never disagree.

use leaderboard_rules::page::Paging;
use std::future::Future;

use crate::store::StoreError;
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::integrity::Rule;
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

/// A result held for review: the request as received, the rule and the figures that
/// tripped it, and the player's standing then.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldResult {
    /// The board's game (empty for a standalone board): the queue it waits in.
    pub game: String,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub match_id: MatchId,
    /// The result's score at the board's places, and its tie-break values.
    pub score: Score,
    pub ties: Ties,
    /// When the match ended (ms), as the request said.
    pub event_ts: Option<i64>,
    /// When it arrived (ms): the reached-at it keeps if approved, so it ties as it would
    /// have.
    pub reached_at: i64,
    pub metadata: Option<Metadata>,
    pub rule: Rule,
    /// The figure the result showed, and the rule's limit it passed.
    pub value: i64,
    pub limit: i64,
    /// The player's standing when it was held.
    pub standing: Option<Score>,
    /// When it was held (ms): the queue's order.
    pub held_at: i64,
    /// How its board writes scores (for the event and the queue's figures).
    pub scores: ScoreFormat,
}

impl HeldResult {
    /// Its id in the API: `{game}~{held_at}~{board}~{player}~{match}` (ids never hold
    /// `~`): its game's queue and its place in it.
    pub fn id(&self) -> String {
        format!(
            "{}~{:013}~{}~{}~{}",
            self.game, self.held_at, self.leaderboard_id, self.player_id, self.match_id
        )
    }

    /// Its id in the queue: unique, and ordered oldest first within a game.
    pub fn queue_key(&self) -> String {
        queue_key(
            self.held_at,
            &self.leaderboard_id,
            &self.player_id,
            &self.match_id,
        )
    }
}

/// The queue key of the result of `player` in `match_id` on `board`, held at `held_at`.
pub fn queue_key(held_at: i64, board: &LeaderboardId, player: &PlayerId, m: &MatchId) -> String {
    format!("{held_at:013}#{board}#{player}#{m}")
}

/// What a row's write does to the review queue, in the same transaction.
#[derive(Debug, Clone, Copy)]
pub enum QueueChange<'a> {
    /// The result joins the queue (it must not be there yet).
    Hold(&'a HeldResult),
    /// An operator decided it: it leaves the queue (it must still be there, so two
    /// decisions cannot both apply).
    Release(&'a HeldResult),
    /// An operator rejected it: it leaves the queue as for [`QueueChange::Release`], and
    /// its match joins the player's rejected matches in its game (once, however many
    /// boards held it).
    Reject(&'a HeldResult),
}

/// How far apart in time the held results of one match's request can be: the boards
/// of one result are written within one invocation.
pub const MATCH_SPAN_MS: i64 = 5 * 60 * 1000;

/// Which held results a listing asks for.
#[derive(Debug, Clone, Default)]
pub struct HeldFilter {
    pub board: Option<LeaderboardId>,
    pub player: Option<PlayerId>,
}

/// One page of a game's queue, oldest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldPage {
    pub held: Vec<HeldResult>,
    /// The queue key to go on after, when more may follow.
    pub next: Option<String>,
}

/// The review queue's reads (its writes go with the rows').
pub trait HeldStore: Send + Sync {
    /// One held result by its game and queue key, if still waiting (strongly
    /// consistent).
    fn get_held(
        &self,
        game: &str,
        key: &str,
    ) -> impl Future<Output = Result<Option<HeldResult>, StoreError>> + Send;

    /// Every held result of `player`'s match `match_id` in the game's queue, in queue
    /// order (strongly consistent): with `around`, only those held within
    /// [`MATCH_SPAN_MS`] of that time (what one request holds), else the whole queue's.
    fn held_of_match(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        around: Option<i64>,
    ) -> impl Future<Output = Result<Vec<HeldResult>, StoreError>> + Send;

    /// Records an operator's decision on `player`'s match in `game` (`approve`) unless
    /// one is recorded; the decision that stands (the first).
    fn claim_decision(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        approve: bool,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// How many of `player`'s matches in `game` were rejected, a match held on many
    /// boards counting once (strongly consistent).
    fn rejections(
        &self,
        game: &str,
        player: &PlayerId,
    ) -> impl Future<Output = Result<u32, StoreError>> + Send;

    /// Up to `limit` of a game's held results after the key `after`, oldest first,
    /// those `filter` does not ask for skipped (a page may then be short).
    fn held_page(
        &self,
        game: &str,
        filter: &HeldFilter,
        page: Paging<'_>,
    ) -> impl Future<Output = Result<HeldPage, StoreError>> + Send;
}
