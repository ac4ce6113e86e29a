//! What `POST /scores` answers: one outcome per board of the family (accepted, held or
//! refused) and, for `POST /matches`, per player.

use serde::Serialize;

use super::tournaments;
use crate::service::ServiceError;
use crate::service::write::reply::{HeldNote, IngestReply};
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::window::Period;

/// Why one board did not take the result.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Refusal {
    pub code: &'static str,
    pub message: String,
}

/// What happened on one board.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum Outcome {
    Accepted {
        score: Shown,
        /// The standing's tie-break values, on a family with columns.
        #[serde(skip_serializing_if = "Option::is_none")]
        subscores: Option<Vec<i64>>,
        previous_score: Option<Shown>,
        update_applied: bool,
        rank: Option<u64>,
        previous_rank: Option<u64>,
        updated_at: String,
        replayed: bool,
        /// Held for review on this board: `status: HELD` and the rule (docs/integrity.md).
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        held: Option<HeldNote>,
    },
    Refused {
        refused: Refusal,
    },
}

/// One board of the fan-out.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BoardOutcome {
    pub scope: String,
    pub period: Period,
    /// `null` when the period has no window for `event_ts` (outside the season).
    pub leaderboard_id: Option<LeaderboardId>,
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Reply of `POST /scores`.
#[derive(Debug, Serialize)]
pub struct MatchReply {
    pub player_id: PlayerId,
    pub match_id: MatchId,
    pub event_ts: String,
    pub results: Vec<BoardOutcome>,
    /// The result in each tournament of the game and mode the player is in (absent
    /// when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tournaments: Vec<tournaments::TournamentOutcome>,
}

pub(crate) fn accepted(r: IngestReply) -> Outcome {
    Outcome::Accepted {
        score: r.score,
        subscores: r.subscores,
        previous_score: r.previous_score,
        update_applied: r.update_applied,
        rank: r.rank,
        previous_rank: r.previous_rank,
        updated_at: r.updated_at,
        replayed: r.replayed,
        held: r.held,
    }
}

pub(crate) fn refused(err: &ServiceError) -> Outcome {
    Outcome::Refused {
        refused: Refusal {
            code: err.code(),
            message: err.to_string(),
        },
    }
}

impl MatchReply {
    /// What the match did now on its family's boards (a replay did nothing now): whether
    /// a board recorded it, whether a board held it, and whether it moved a standing.
    pub(super) fn now(&self) -> (bool, bool, bool) {
        let (mut applied, mut held, mut improved) = (false, false, false);
        for r in &self.results {
            if let Outcome::Accepted {
                replayed: false,
                held: h,
                update_applied,
                ..
            } = &r.outcome
            {
                held |= h.is_some();
                applied |= h.is_none();
                improved |= h.is_none() && *update_applied;
            }
        }
        (applied, held, improved)
    }

    /// Whether any board held the result for review (the reply is then a 202).
    pub fn held(&self) -> bool {
        (self.results.iter()).any(|r| matches!(r.outcome, Outcome::Accepted { held: Some(_), .. }))
    }
}
