//! What a result answers (docs/api.md): the reply, made from the receipt its row keeps,
//! so that a retry answers the same.

use serde::Serialize;

use super::request::SubmitScore;
use crate::store::{Receipt, Review};
use leaderboard_rules::board::Board;
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::time::rfc3339_ms;

/// The ingest reply (docs/api.md).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IngestReply {
    pub player_id: PlayerId,
    pub leaderboard_id: LeaderboardId,
    /// Written as the board writes scores (docs/decimals.md).
    pub score: Shown,
    /// The standing's tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    pub previous_score: Option<Shown>,
    pub last_match_id: MatchId,
    /// Reached-at of `score`, RFC 3339 with ms: what the board orders ties by.
    pub updated_at: String,
    pub update_applied: bool,
    /// The player's rank now; `null` when the rank index could not be reached.
    pub rank: Option<u64>,
    pub total: Option<u64>,
    /// The rank before this submission (`null` for a player new to the board, or when
    /// the index could not say); kept in the receipt, so a retry answers the same.
    pub previous_rank: Option<u64>,
    pub replayed: bool,
    /// A tournament result's count of attempts as its write left it (from the receipt,
    /// so a retry answers the original's); the tournament's reply shows it.
    #[serde(skip)]
    pub attempts_used: Option<u32>,
    /// A result held for review (`status: HELD` and the rule's code): it changed
    /// nothing, and the reply is a 202 (docs/integrity.md).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub held: Option<HeldNote>,
}

/// What a held result's reply says.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct HeldNote {
    /// Always `HELD`.
    pub status: &'static str,
    /// The rule that held it ([`leaderboard_rules::integrity::Rule::code`]).
    pub rule: &'static str,
}

impl HeldNote {
    pub fn of(rule: leaderboard_rules::integrity::Rule) -> Self {
        Self {
            status: "HELD",
            rule: rule.code(),
        }
    }
}

impl IngestReply {
    pub(crate) fn new(board: &Board, req: &SubmitScore, r: &Receipt, replayed: bool) -> Self {
        let show = |s| board.scores.show(s);
        Self {
            player_id: req.player.clone(),
            leaderboard_id: req.board.clone(),
            score: show(r.score),
            subscores: board.scores.tiebreaks.shown(&r.ties),
            previous_score: r.previous_score.map(show),
            last_match_id: r.last_match_id.clone(),
            updated_at: rfc3339_ms(r.updated_at),
            update_applied: r.update_applied,
            rank: None,
            total: None,
            previous_rank: r.previous_rank,
            replayed,
            attempts_used: r.attempt,
            held: match r.review {
                Some(Review::Held(rule)) => Some(HeldNote::of(rule)),
                _ => None,
            },
        }
    }
}
