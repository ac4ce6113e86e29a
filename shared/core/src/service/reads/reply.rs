//! What the reads answer: ranked rows, the four replies, and the provenance every reply
//! carries (where it came from, whether degraded, approximate or stale).

use serde::Serialize;

use super::estimate::Estimate;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::decimal::{ScoreFormat, Shown};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{RankKey, RankMode, Start, places};
use leaderboard_rules::profile::Card;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

/// Where a read was answered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Redis,
    /// DynamoDB's rank-ordered index.
    Dynamodb,
    /// This container's last good answer to the same read.
    Cache,
}

/// How a reply was produced; flattened into every read reply.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Provenance {
    pub as_of: String,
    pub source: Source,
    /// The normal source could not answer; this answer is correct but came another way.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub degraded: bool,
    /// For a cached answer: how old it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_ms: Option<u64>,
    /// The ranks are estimates: a big board read from DynamoDB, where counting every
    /// entry before a player would cost in proportion to the rank (see [`super::COUNT_CAP`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rank_approximate: bool,
    /// The total is an estimate, for the same reason.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub total_approximate: bool,
    /// Some rows' names could not be read (Redis and DynamoDB both failed to give their
    /// cards): those rows show null names; everything else is as exact as ever.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub names_missing: bool,
}

impl Provenance {
    pub(super) fn now(source: Source, degraded: bool) -> Self {
        Self {
            as_of: rfc3339_ms(now_ms()),
            source,
            degraded,
            stale_ms: None,
            rank_approximate: false,
            total_approximate: false,
            names_missing: false,
        }
    }

    pub(super) fn estimated(mut self, est: &Estimate) -> Self {
        self.rank_approximate = est.rank_approximate;
        self.total_approximate = est.total_approximate;
        self
    }
}

/// A read reply that carries its [`Provenance`].
pub trait Answer: Clone + Send + Sync + 'static {
    fn provenance(&mut self) -> &mut Provenance;
}

/// A reply of rows that reads the same for every reader (`top`, `ranks`, `entries`) and
/// is cached so: the `self` flag is not part of what is cached, it is set on the way out
/// for whoever is reading.
pub trait Rows: Sized {
    fn rows(&mut self) -> &mut [Entry];

    /// The reply as `caller` reads it: `self` true on their own row, false on every other.
    fn seen_by(mut self, caller: &Caller) -> Self {
        for row in self.rows() {
            row.is_self = caller
                .player
                .as_ref()
                .is_some_and(|p| p.as_str() == row.player_id);
        }
        self
    }
}

/// One ranked row.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Entry {
    /// The row's place under the reply's `rank_mode`.
    pub rank: u64,
    pub player_id: String,
    /// Written as the board writes scores (docs/decimals.md).
    pub score: Shown,
    /// The tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    pub updated_at: String,
    /// True on the requesting player's own row.
    #[serde(rename = "self")]
    pub is_self: bool,
    /// The player's current display name, avatar and country (null without a profile).
    #[serde(flatten)]
    pub card: Card,
    /// The metadata of the result that set the row's standing (null for none).
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// A live view's row is a read's row without its time and self flag.
impl From<&Entry> for leaderboard_rules::live::Row {
    fn from(e: &Entry) -> Self {
        Self {
            rank: e.rank,
            player_id: e.player_id.clone(),
            score: e.score,
            subscores: e.subscores.clone(),
            card: e.card.clone(),
            metadata: e.metadata.clone(),
        }
    }
}

impl Entry {
    pub(super) fn new(rank: u64, key: RankKey, me: Option<&PlayerId>, f: ScoreFormat) -> Self {
        Self {
            rank,
            is_self: me.is_some_and(|p| p.as_str() == key.player),
            score: f.show(key.score),
            subscores: f.tiebreaks.shown(&key.ties),
            updated_at: rfc3339_ms(key.reached_at),
            player_id: key.player,
            card: Card::default(),
            metadata: None,
        }
    }
}

/// Rows for consecutive `keys` in rank order, the first standing at `start`, their
/// scores written as `f` says.
pub(super) fn entries(
    mode: RankMode,
    start: Start,
    keys: Vec<RankKey>,
    me: Option<&PlayerId>,
    f: ScoreFormat,
) -> Vec<Entry> {
    let ranks = places(mode, start, &keys);
    keys.into_iter()
        .zip(ranks)
        .map(|(key, rank)| Entry::new(rank, key, me, f))
        .collect()
}

/// Reply of `GET /leaderboards/{lb}/players/{p}/rank`.
#[derive(Debug, Clone, Serialize)]
pub struct RankReply {
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub score: Shown,
    /// The player's tie-break values, on a board with columns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    /// The player's 1-based place on the whole board, under `rank_mode`.
    pub global_rank: u64,
    pub rank_mode: RankMode,
    pub total: u64,
    /// The share of the board at or below the player's place in the board's order (ties
    /// broken as `unique` breaks them, whatever `rank_mode`), in percent, two decimals.
    pub percentile: f64,
    /// The points needed to pass the player directly above; `null` at rank 1.
    pub points_to_next: Option<Shown>,
    pub updated_at: String,
    /// Up to k rows above and k below, the player's own row included and flagged.
    pub neighbors: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/top`.
#[derive(Debug, Clone, Serialize)]
pub struct TopReply {
    pub leaderboard_id: LeaderboardId,
    /// How many entries were asked for (after clamping to the largest `n`).
    pub top_n: u64,
    pub rank_mode: RankMode,
    pub total: u64,
    pub entries: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/players/{p}/friends-rank`.
#[derive(Debug, Clone, Serialize)]
pub struct FriendsReply {
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    /// The player's score on the board; `null` if the player has none.
    pub score: Option<Shown>,
    /// The player's tie-break values, on a board with columns when they have a score.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    /// The player's 1-based place in the group under `rank_mode`; `null` if the player
    /// has no score.
    pub friends_rank: Option<u64>,
    pub rank_mode: RankMode,
    /// Size of the group: the player and the friends who have a score.
    pub friends_total: u64,
    /// k rows around the player, or the group's top 2k+1 if the player has no score.
    /// `rank` in these rows is the place within the group.
    pub neighbors: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/ranks`.
#[derive(Debug, Clone, Serialize)]
pub struct PageReply {
    pub leaderboard_id: LeaderboardId,
    pub rank_mode: RankMode,
    pub total: u64,
    /// The page's rows, without the players who moved during the walk (see `moved`).
    pub entries: Vec<Entry>,
    /// Players this walk could not place so far: left out because they moved after its
    /// first page, or risen past its position unseen. 0 on a walk of a board nobody
    /// wrote to since it began.
    pub moved: u64,
    /// Pass back as `cursor` for the next page; `null` after the last page.
    pub next_cursor: Option<String>,
    /// Pass back as `cursor` for the page before this one; `null` on a page at rank 1.
    pub prev_cursor: Option<String>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/entries`.
#[derive(Debug, Clone, Serialize)]
pub struct EntriesReply {
    pub leaderboard_id: LeaderboardId,
    pub rank_mode: RankMode,
    pub total: u64,
    /// The rows of the players asked for who are on the board, in rank order.
    pub entries: Vec<Entry>,
    /// The players asked for who have no score on the board, in the order asked.
    pub unknown: Vec<PlayerId>,
    #[serde(flatten)]
    pub meta: Provenance,
}

macro_rules! answer {
    ($($t:ty),*) => {$(
        impl Answer for $t {
            fn provenance(&mut self) -> &mut Provenance {
                &mut self.meta
            }
        }
    )*};
}
answer!(RankReply, TopReply, FriendsReply, PageReply, EntriesReply);

macro_rules! rows {
    ($($t:ty),*) => {$(
        impl Rows for $t {
            fn rows(&mut self) -> &mut [Entry] {
                &mut self.entries
            }
        }
    )*};
}
rows!(TopReply, PageReply, EntriesReply);
