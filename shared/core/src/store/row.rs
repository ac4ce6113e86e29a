//! A player's row on a board and the writes of it: the row as read ([`Row`]), what every
//! write of it starts from ([`RowAt`]), a result's commit with its receipt, a rolling
//! board's roll, a removal's tombstone, and what a conditional write came to.

use super::receipts::KeptReceipt;
use super::{AuditRecord, IndexEntry, QueueChange};
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::integrity::Rule;
use leaderboard_rules::order::Direction;
use leaderboard_rules::rolling::Bucket;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

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
    /// The digest of the metadata the request carried ([`leaderboard_rules::profile::Metadata::digest`]),
    /// so that a retry with other metadata is a conflict, not a replay.
    pub metadata_digest: Option<String>,
    /// The result was an operator's correction (`op: set`): a retry must be one too.
    pub set: bool,
    /// A tournament result's attempt: the player's count of results in the occurrence
    /// as this result's write left it, which a retry answers again.
    pub attempt: Option<u32>,
    /// A result held by an integrity rule (or rejected since): it touched no standing
    /// (docs/integrity.md).
    pub review: Option<Review>,
}

/// Where a held result's review stands, as its receipt keeps it. An approved result's
/// receipt is an ordinary one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Review {
    /// Held by this rule, waiting in the review queue.
    Held(Rule),
    /// Rejected by an operator: it never counts.
    Rejected,
}

impl Review {
    /// The code kept in the row: the rule's, or `rejected`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Held(rule) => rule.code(),
            Self::Rejected => "rejected",
        }
    }

    pub fn parse(code: &str) -> Option<Self> {
        match code {
            "rejected" => Some(Self::Rejected),
            other => Rule::parse(other).map(Self::Held),
        }
    }
}

/// The row a write is of: whose, on which board in which order, the row as read (every
/// write of it is conditional on its revision, and keeps its receipts), and when the
/// board's Redis keys expire (closed windows; epoch seconds). Every write of a row
/// ([`Commit`], [`Roll`], [`Removal`]) starts from one.
#[derive(Debug, Clone, Copy)]
pub struct RowAt<'a> {
    pub board: &'a LeaderboardId,
    pub player: &'a PlayerId,
    pub direction: Direction,
    pub row: &'a Row,
    pub index_expire_at: Option<i64>,
}

/// One conditional write of the player's row: the new standing (if the fold applied)
/// and the receipt of this submission, kept in the row (see [`Row::keep`]).
#[derive(Debug)]
pub struct Commit<'a> {
    pub at: RowAt<'a>,
    /// The standing the row holds after the write: the new one if the fold applied,
    /// the current one if it did not (`receipt.receipt.update_applied` says which);
    /// `None` for a row without one that keeps a held result's receipt (written as a
    /// tombstone at the row's version, so the index changes nothing).
    pub standing: Option<&'a Standing>,
    /// This submission's receipt.
    pub receipt: KeptReceipt,
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
    /// A held result joining the review queue, or leaving it decided, with the row or
    /// not at all.
    pub queue: Option<QueueChange<'a>>,
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
/// without a bucket becomes a tombstone instead: [`StandingStore::remove_standing`](crate::store::StandingStore::remove_standing).)
#[derive(Debug)]
pub struct Roll<'a> {
    pub at: RowAt<'a>,
    pub standing: &'a Standing,
    pub buckets: Buckets<'a>,
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
    pub at: RowAt<'a>,
    pub removed_at: i64,
}

impl Removal<'_> {
    /// The tombstone's version: the one after the row's.
    pub fn version(&self) -> u64 {
        self.at.row.version.map_or(1, |v| v + 1)
    }

    /// The index entry that takes the player off the board at the tombstone's version.
    pub fn index_entry(&self) -> IndexEntry {
        let a = &self.at;
        let kind = super::EntryKind::Removed;
        IndexEntry::removal(
            a.board,
            a.direction,
            a.player,
            self.version(),
            a.index_expire_at,
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
