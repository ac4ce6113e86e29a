//! The stored shapes of standings and receipts (the other items live beside the code
//! that reads them).

use serde::{Deserialize, Serialize};

use super::keys::{receipt_pk_sk, standing_partition};
use leaderboard_core::store::{
    Buckets, EntryKind, IndexEntry, KeptReceipt, Receipt, Removal, Review, Row, RowAt,
};
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::{Direction, RankKey};
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::rolling::Bucket;
use leaderboard_rules::score::Score;

/// A `by_expiry` sort key: ms, 13 digits, so keys sort as times.
pub(super) fn expiry_key(ms: i64) -> String {
    format!("{:013}", ms.max(0))
}
use leaderboard_rules::tiebreak::Ties;

/// A standing as stored, and as the stream delivers it to the projector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingItem {
    pub pk: String,
    pub sk: String,
    pub kind: String,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub direction: Direction,
    pub score: Score,
    /// The tie-break values, encoded (absent on a board without columns).
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    pub ties: Ties,
    pub reached_at: i64,
    pub version: u64,
    pub last_match_id: MatchId,
    /// The rank-ordered sort key (`by_rank` index); absent on the rows of a board that
    /// keeps no rank order in DynamoDB (`Board::rank_index`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rk: Option<String>,
    /// Epoch seconds at which the board's Redis keys expire, for a time window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_expire_at: Option<i64>,
    /// The standing's metadata, compact JSON (absent when its result carried none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub md: Option<String>,
    /// On a rolling board: the buckets of the player's results in the window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rb: Vec<Bucket>,
    /// On a rolling board: when the first bucket leaves the window, 13 digits of ms
    /// (the `by_expiry` index's sort key; absent elsewhere, so the index is sparse).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xk: Option<String>,
    #[serde(flatten)]
    pub kept: KeptItems,
}

/// What every row keeps beside its standing or tombstone: its revision and receipts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptItems {
    /// Bumped by every write of the row; absent on rows from before kept receipts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rev: Option<u64>,
    /// The latest matches' receipts, newest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub receipts: Vec<InlineReceipt>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archived_until: Option<i64>,
}

impl KeptItems {
    /// What a write of `row` stores beside the standing or tombstone: the next
    /// revision, `receipts` and `archived_until`.
    pub(super) fn written(
        row: &Row,
        receipts: &[KeptReceipt],
        archived_until: Option<i64>,
    ) -> Self {
        Self {
            rev: Some(row.next_rev()),
            receipts: receipts.iter().map(InlineReceipt::of).collect(),
            archived_until,
        }
    }

    fn into_row(self, row: Row) -> Row {
        Row {
            rev: self.rev,
            receipts: self.receipts.into_iter().map(InlineReceipt::kept).collect(),
            archived_until: self.archived_until,
            ..row
        }
    }
}

/// A receipt as a row keeps it, in short attribute names: a row holds several, and
/// every byte of the row is billed on every write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InlineReceipt {
    #[serde(rename = "m")]
    match_id: MatchId,
    #[serde(rename = "s")]
    submitted: Score,
    #[serde(rename = "t", default, skip_serializing_if = "Ties::is_empty")]
    submitted_ties: Ties,
    #[serde(rename = "c")]
    score: Score,
    #[serde(rename = "x", default, skip_serializing_if = "Ties::is_empty")]
    ties: Ties,
    #[serde(rename = "p", default, skip_serializing_if = "Option::is_none")]
    previous_score: Option<Score>,
    #[serde(rename = "a")]
    update_applied: bool,
    #[serde(rename = "u")]
    updated_at: i64,
    /// The match that produced `score`, when it is not this one.
    #[serde(rename = "l", default, skip_serializing_if = "Option::is_none")]
    last_match_id: Option<MatchId>,
    #[serde(rename = "r", default, skip_serializing_if = "Option::is_none")]
    previous_rank: Option<u64>,
    /// The digest of the metadata the request carried, if any.
    #[serde(rename = "d", default, skip_serializing_if = "Option::is_none")]
    metadata_digest: Option<String>,
    /// An operator's correction (`op: set`).
    #[serde(rename = "o", default, skip_serializing_if = "std::ops::Not::not")]
    set: bool,
    /// A tournament result's count of attempts as its write left it.
    #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    /// A held result's review ([`Review::code`]).
    #[serde(rename = "h", default, skip_serializing_if = "Option::is_none")]
    review: Option<String>,
    #[serde(rename = "e")]
    expires_at: i64,
}

impl InlineReceipt {
    fn of(k: &KeptReceipt) -> Self {
        let r = &k.receipt;
        Self {
            match_id: k.match_id.clone(),
            submitted: r.submitted,
            submitted_ties: r.submitted_ties.clone(),
            score: r.score,
            ties: r.ties.clone(),
            previous_score: r.previous_score,
            update_applied: r.update_applied,
            updated_at: r.updated_at,
            last_match_id: (r.last_match_id != k.match_id).then(|| r.last_match_id.clone()),
            previous_rank: r.previous_rank,
            metadata_digest: r.metadata_digest.clone(),
            set: r.set,
            attempt: r.attempt,
            review: r.review.map(|r| r.code().to_owned()),
            expires_at: k.expires_at,
        }
    }

    fn kept(self) -> KeptReceipt {
        KeptReceipt {
            receipt: Receipt {
                submitted: self.submitted,
                submitted_ties: self.submitted_ties,
                score: self.score,
                ties: self.ties,
                previous_score: self.previous_score,
                update_applied: self.update_applied,
                updated_at: self.updated_at,
                last_match_id: self.last_match_id.unwrap_or_else(|| self.match_id.clone()),
                previous_rank: self.previous_rank,
                metadata_digest: self.metadata_digest,
                set: self.set,
                attempt: self.attempt,
                review: self.review.as_deref().and_then(Review::parse),
            },
            match_id: self.match_id,
            expires_at: self.expires_at,
        }
    }
}

impl StandingItem {
    pub const KIND: &'static str = "standing";

    /// The stored item of `player`'s standing `s` on `board`.
    pub fn new(
        board: &LeaderboardId,
        player: &PlayerId,
        direction: Direction,
        s: &Standing,
        index_expire_at: Option<i64>,
    ) -> Self {
        let rank_key = s.key(player.as_str());
        Self {
            pk: standing_partition(board, player),
            sk: player.to_string(),
            kind: Self::KIND.into(),
            leaderboard_id: board.clone(),
            player_id: player.clone(),
            direction,
            score: s.score,
            ties: s.ties.clone(),
            reached_at: s.reached_at,
            version: s.version,
            last_match_id: s.last_match_id.clone(),
            rk: Some(rank_key.sort_key(direction)),
            index_expire_at,
            md: s.metadata.as_ref().map(|m| m.as_str().to_owned()),
            rb: Vec::new(),
            xk: None,
            kept: KeptItems::default(),
        }
    }

    /// The item with a rolling board's buckets and its place in `by_expiry`.
    pub fn with_buckets(self, b: Option<Buckets<'_>>) -> Self {
        let Some(b) = b else {
            return self;
        };
        Self {
            rb: b.buckets.to_vec(),
            xk: b.next_expiry.map(expiry_key),
            ..self
        }
    }

    /// The index entry this row projects to.
    pub fn index_entry(&self) -> IndexEntry {
        IndexEntry {
            board: self.leaderboard_id.clone(),
            direction: self.direction,
            key: RankKey {
                score: self.score,
                ties: self.ties.clone(),
                reached_at: self.reached_at,
                player: self.player_id.to_string(),
            },
            version: self.version,
            expire_at: self.index_expire_at,
            kind: leaderboard_core::store::EntryKind::Standing,
            metadata: self.metadata(),
        }
    }

    /// The stored metadata (none if unreadable: a row shows none rather than failing).
    fn metadata(&self) -> Option<Metadata> {
        self.md.as_deref().and_then(Metadata::stored)
    }

    pub(super) fn standing(self) -> Standing {
        Standing {
            metadata: self.metadata(),
            score: self.score,
            ties: self.ties,
            reached_at: self.reached_at,
            version: self.version,
            last_match_id: self.last_match_id,
        }
    }
}

/// What stays of a standing an operator removed: its key, its board's direction and
/// the next version, so that the index refuses older changes and a later result starts
/// the player over at a newer version. It has no `rk`, so it is not in `by_rank`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RemovedItem {
    pub pk: String,
    pub sk: String,
    pub kind: String,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub direction: Direction,
    pub version: u64,
    /// When it was removed, ms since the epoch.
    pub removed_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_expire_at: Option<i64>,
    #[serde(flatten)]
    pub kept: KeptItems,
}

impl RemovedItem {
    pub const KIND: &'static str = "removed";

    pub(super) fn of(r: &Removal<'_>) -> Self {
        Self {
            pk: standing_partition(r.at.board, r.at.player),
            sk: r.at.player.to_string(),
            kind: Self::KIND.into(),
            leaderboard_id: r.at.board.clone(),
            player_id: r.at.player.clone(),
            direction: r.at.direction,
            version: r.version(),
            removed_at: r.removed_at,
            index_expire_at: r.at.index_expire_at,
            kept: KeptItems::written(r.at.row, &r.at.row.receipts, r.at.row.archived_until),
        }
    }

    /// The row of a player without a standing that keeps a held result's receipt: a
    /// tombstone at the row's version (0 for a new row), which takes nobody off the
    /// index that was not already off it.
    pub(super) fn keeping(at: &RowAt<'_>, kept: KeptItems, now_s: i64) -> Self {
        Self {
            pk: standing_partition(at.board, at.player),
            sk: at.player.to_string(),
            kind: Self::KIND.into(),
            leaderboard_id: at.board.clone(),
            player_id: at.player.clone(),
            direction: at.direction,
            version: at.row.version.unwrap_or(0),
            removed_at: now_s * 1000,
            index_expire_at: at.index_expire_at,
            kept,
        }
    }
}

/// A player's row on a board as stored: their standing or the tombstone of a removed one.
#[derive(Debug)]
pub enum Slot {
    Standing(StandingItem),
    Removed(RemovedItem),
}

impl Slot {
    /// Decodes a row by its `kind`; `None` for any other item.
    pub fn decode<I>(kind: Option<&str>, item: I) -> Result<Option<Self>, serde_dynamo::Error>
    where
        I: Into<serde_dynamo::Item>,
    {
        Ok(match kind {
            Some(StandingItem::KIND) => Some(Self::Standing(serde_dynamo::from_item(item.into())?)),
            Some(RemovedItem::KIND) => Some(Self::Removed(serde_dynamo::from_item(item.into())?)),
            _ => None,
        })
    }

    /// The row's index entry: its standing, or the removal at the tombstone's version.
    pub fn index_entry(&self) -> IndexEntry {
        match self {
            Self::Standing(s) => s.index_entry(),
            Self::Removed(_) => self.removal(EntryKind::Removed),
        }
    }

    /// The entry that takes the row's player off its board at the row's version, as
    /// `kind` (a removal, or an erasure when the row itself was deleted).
    pub fn removal(&self, kind: EntryKind) -> IndexEntry {
        let (board, dir, player, expire_at) = match self {
            Self::Standing(s) => (
                &s.leaderboard_id,
                s.direction,
                &s.player_id,
                s.index_expire_at,
            ),
            Self::Removed(r) => (
                &r.leaderboard_id,
                r.direction,
                &r.player_id,
                r.index_expire_at,
            ),
        };
        IndexEntry::removal(board, dir, player, self.version(), expire_at, kind)
    }

    pub(super) fn row(self) -> Row {
        match self {
            Self::Standing(mut s) => {
                let kept = std::mem::take(&mut s.kept);
                let buckets = std::mem::take(&mut s.rb);
                kept.into_row(Row {
                    version: Some(s.version),
                    standing: Some(s.standing()),
                    buckets,
                    ..Row::default()
                })
            }
            Self::Removed(r) => r.kept.into_row(Row {
                version: Some(r.version),
                ..Row::default()
            }),
        }
    }

    pub fn version(&self) -> u64 {
        match self {
            Self::Standing(s) => s.version,
            Self::Removed(r) => r.version,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ReceiptItem {
    pk: String,
    sk: String,
    kind: String,
    submitted: Score,
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    submitted_ties: Ties,
    score: Score,
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    ties: Ties,
    previous_score: Option<Score>,
    update_applied: bool,
    updated_at: i64,
    last_match_id: MatchId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_rank: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    metadata_digest: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    set: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attempt: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    review: Option<String>,
    expires_at: i64,
}

impl ReceiptItem {
    /// The item of a receipt that leaves its row.
    pub(super) fn of(board: &LeaderboardId, player: &PlayerId, k: &KeptReceipt) -> Self {
        let (pk, sk) = receipt_pk_sk(board, player, &k.match_id);
        let r = &k.receipt;
        Self {
            pk,
            sk,
            kind: "receipt".into(),
            submitted: r.submitted,
            submitted_ties: r.submitted_ties.clone(),
            score: r.score,
            ties: r.ties.clone(),
            previous_score: r.previous_score,
            update_applied: r.update_applied,
            updated_at: r.updated_at,
            last_match_id: r.last_match_id.clone(),
            previous_rank: r.previous_rank,
            metadata_digest: r.metadata_digest.clone(),
            set: r.set,
            attempt: r.attempt,
            review: r.review.map(|r| r.code().to_owned()),
            expires_at: k.expires_at,
        }
    }

    /// The receipt as the use cases know it.
    pub(super) fn receipt(self) -> Receipt {
        Receipt {
            submitted: self.submitted,
            submitted_ties: self.submitted_ties,
            score: self.score,
            ties: self.ties,
            previous_score: self.previous_score,
            update_applied: self.update_applied,
            updated_at: self.updated_at,
            last_match_id: self.last_match_id,
            previous_rank: self.previous_rank,
            metadata_digest: self.metadata_digest,
            set: self.set,
            attempt: self.attempt,
            review: self.review.as_deref().and_then(Review::parse),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn policies_keep_their_stored_names() {
        assert_eq!(
            serde_json::to_string(&leaderboard_rules::board::Policy::Min).unwrap(),
            "\"MIN\""
        );
    }
}
