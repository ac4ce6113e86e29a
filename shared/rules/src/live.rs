//! Live views: what a game client watches and how a change of it is told.
//!
//! Two views: a board's top `n` ([`MAX_TOP`] at most) and a player's neighbourhood (rank
//! +- `k`, [`MAX_K`] at most). Each is published on a channel of the events API (AppSync
//! Events in AWS): every board view on its own channel in the `leaderboards` namespace,
//! every neighbourhood of a player on the player's own channel in the `players`
//! namespace, which only that player may subscribe to (the channel spells the JWT
//! subject, see [`player_channel`]).
//!
//! A push carries the view whole (a client never applies deltas), its `version` and the
//! `previous` version it replaces: a client holding `previous` is in step, one holding
//! less missed a push and reads the view again. Versions are the publish time in epoch
//! ms, kept strictly increasing, so they stay increasing across a Redis that lost its
//! state. What the digest covers is what a push is for: the rows (player, score, rank),
//! not the board's size, so a write below a top view pushes nothing.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::decimal::Shown;
use crate::error::DomainError;
use crate::ids::{LeaderboardId, PlayerId};

/// Largest top view.
pub const MAX_TOP: u64 = 100;
/// Largest neighbourhood (rows on each side of the player).
pub const MAX_K: u64 = 10;
/// At most one push per view in this long.
pub const PUSH_GAP_MS: u64 = 500;
/// How long one snapshot read keeps a view watched (a client reads its view again on
/// every reconnect, and at least this often while it stays connected).
pub const WATCH_TTL_MS: i64 = 3_600_000;
/// The ranks a player is told they entered.
pub const TOP_MARKS: [u64; 3] = [100, 10, 1];

/// A view of one board.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum View {
    Top { n: u64 },
    Near { player: PlayerId, k: u64 },
}

impl View {
    /// The top `n` (1..=[`MAX_TOP`]).
    pub fn top(n: u64) -> Result<Self, DomainError> {
        match n {
            1..=MAX_TOP => Ok(Self::Top { n }),
            _ => Err(DomainError::invalid(
                "n",
                format!("must be between 1 and {MAX_TOP} for a live view"),
            )),
        }
    }

    /// `player`'s rank +- `k` (0..=[`MAX_K`]).
    pub fn near(player: PlayerId, k: u64) -> Result<Self, DomainError> {
        match k {
            0..=MAX_K => Ok(Self::Near { player, k }),
            _ => Err(DomainError::invalid(
                "k",
                format!("must be between 0 and {MAX_K} for a live view"),
            )),
        }
    }

    /// Its name among the board's watched views: `top:{n}` or `near:{k}:{player}`.
    pub fn id(&self) -> String {
        match self {
            Self::Top { n } => format!("top:{n}"),
            Self::Near { player, k } => format!("near:{k}:{player}"),
        }
    }

    /// The view an [`id`](Self::id) names; `None` for anything else.
    pub fn from_id(id: &str) -> Option<Self> {
        let mut parts = id.splitn(3, ':');
        match (parts.next()?, parts.next()?, parts.next()) {
            ("top", n, None) => Self::top(n.parse().ok()?).ok(),
            ("near", k, Some(p)) => Self::near(PlayerId::parse(p).ok()?, k.parse().ok()?).ok(),
            _ => None,
        }
    }

    /// Its channel on the events API.
    pub fn channel(&self, lb: &LeaderboardId) -> Result<String, DomainError> {
        match self {
            Self::Top { n } => Ok(format!("/leaderboards/{}/top-{n}", board_segment(lb))),
            Self::Near { player, .. } => player_channel(player),
        }
    }
}

/// A board's channel segment: 40 hex digits of the id's SHA-256 (channel segments take
/// only `[A-Za-z0-9-]`, at most 50; board ids take more). Clients read channels from the
/// snapshot, never compute them.
fn board_segment(lb: &LeaderboardId) -> String {
    let digest = Sha256::digest(lb.as_str().as_bytes());
    hex(&digest[..20])
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Longest channel segment the events API takes.
const SEGMENT_MAX: usize = 50;
/// Segments a channel may have after its namespace.
const SEGMENTS_MAX: usize = 4;

/// `player`'s own channel: `/players/` and the id spelled in channel characters (each
/// byte outside `[A-Za-z0-9]` as `-` and two hex digits, so `-` itself is `-2d`), cut
/// into segments of 50. The `players` namespace's subscribe handler spells the caller's
/// JWT subject the same way and refuses any other channel. An id too long for four
/// segments cannot be watched (400).
pub fn player_channel(player: &PlayerId) -> Result<String, DomainError> {
    let spelled = spell(player.as_str());
    let segments: Vec<&str> = spelled
        .as_bytes()
        .chunks(SEGMENT_MAX)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    if segments.len() > SEGMENTS_MAX {
        return Err(DomainError::invalid(
            "player_id",
            "is too long to spell as a live channel; watch a player with a shorter id",
        ));
    }
    Ok(format!("/players/{}", segments.join("/")))
}

/// An id in channel characters (see [`player_channel`]).
pub fn spell(id: &str) -> String {
    id.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => (b as char).to_string(),
            _ => format!("-{b:02x}"),
        })
        .collect()
}

/// The rows of a view as pushed and as read: `entries` for a top view; for a
/// neighbourhood also the player's own standing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rows {
    /// The player's own rank (neighbourhoods only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u64>,
    /// The player's score (neighbourhoods only), as the board writes scores.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<Shown>,
    pub entries: Vec<Row>,
}

/// One row of a view, with its player's current card (a rename changes the view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub rank: u64,
    pub player_id: String,
    /// As the board writes scores (docs/decimals.md).
    pub score: Shown,
    /// The tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    #[serde(flatten)]
    pub card: crate::profile::Card,
    /// The metadata of the result that set the row's standing.
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

impl Rows {
    /// What the push-or-not decision compares.
    pub fn digest(&self) -> String {
        let body = serde_json::to_vec(self).unwrap_or_default();
        hex(&Sha256::digest(&body)[..16])
    }
}

/// The last push of a view, as kept beside the index.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Published {
    pub version: u64,
    pub digest: String,
    pub rows: Rows,
}

/// The version after `previous` at `now_ms`: the time, or one more than `previous` if
/// the clock has not moved past it.
pub fn next_version(previous: Option<u64>, now_ms: u64) -> u64 {
    previous.map_or(now_ms, |p| now_ms.max(p + 1))
}

/// Something a neighbourhood push tells its player beyond the rows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Notice {
    /// The player's rank fell; `by` names the players now above in the view who were not
    /// above at the last push (empty when those who passed are beyond the view's rows).
    Overtaken {
        by: Vec<String>,
        rank_before: u64,
        rank: u64,
    },
    /// The player's rank reached `top` (100, 10 or 1) from outside it.
    EnteredTop { top: u64 },
}

/// What changed for the player between two neighbourhood pushes.
pub fn notices(player: &PlayerId, before: Option<&Rows>, now: &Rows) -> Vec<Notice> {
    let (Some(before), Some(rank)) = (before, now.rank) else {
        return Vec::new();
    };
    let Some(rank_before) = before.rank else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if rank > rank_before {
        let was_above: Vec<&str> = before
            .entries
            .iter()
            .filter(|r| r.rank < rank_before)
            .map(|r| r.player_id.as_str())
            .collect();
        let by: Vec<String> = now
            .entries
            .iter()
            .filter(|r| r.rank < rank && r.player_id != player.as_str())
            .filter(|r| !was_above.contains(&r.player_id.as_str()))
            .map(|r| r.player_id.clone())
            .collect();
        out.push(Notice::Overtaken {
            by,
            rank_before,
            rank,
        });
    }
    out.extend(
        TOP_MARKS
            .iter()
            .filter(|&&top| rank <= top && rank_before > top)
            .map(|&top| Notice::EnteredTop { top }),
    );
    out
}

/// One push, as the events API carries it (the event is this, serialised).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Push {
    pub leaderboard_id: String,
    /// `top` or `near`.
    pub view: String,
    /// The top view's size, or the neighbourhood's k.
    pub size: u64,
    /// The neighbourhood's player.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_id: Option<String>,
    pub version: u64,
    /// The version this push follows (0: the view's first push).
    pub previous: u64,
    #[serde(flatten)]
    pub rows: Rows,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<Notice>,
}

impl Push {
    /// `rows` of `view` at `version`, following `previous`.
    pub fn new(lb: &LeaderboardId, view: &View, version: u64, previous: u64, rows: Rows) -> Self {
        let (kind, size, player_id) = match view {
            View::Top { n } => ("top", *n, None),
            View::Near { player, k } => ("near", *k, Some(player.to_string())),
        };
        Self {
            leaderboard_id: lb.to_string(),
            view: kind.into(),
            size,
            player_id,
            version,
            previous,
            rows,
            notices: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
