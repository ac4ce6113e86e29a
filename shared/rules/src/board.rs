//! Leaderboard definitions: the write [`Policy`] fixed at creation, the lifecycle
//! [`BoardStatus`], and the fold that turns a submitted score into a new standing.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decimal::ScoreFormat;
use crate::error::DomainError;
use crate::ids::{LeaderboardId, MatchId};
use crate::integrity::Integrity;
use crate::order::{RankKey, RankMode};
pub use crate::policy::Policy;
use crate::profile::Metadata;
use crate::reset::BoardReset;
use crate::score::Score;
use crate::tiebreak::{Columns, Ties};
use crate::window::TimeWindow;

/// Where a board is in its life. Only `ACTIVE` boards accept writes; all serve reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BoardStatus {
    #[default]
    Active,
    Frozen,
    Closed,
}

impl BoardStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "ACTIVE",
            Self::Frozen => "FROZEN",
            Self::Closed => "CLOSED",
        }
    }
}

impl fmt::Display for BoardStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A leaderboard's definition as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Board {
    pub leaderboard_id: LeaderboardId,
    pub policy: Policy,
    /// The status an operator set; see [`Board::effective_status`] for time windows.
    pub status: BoardStatus,
    /// Creation time, ms since the Unix epoch.
    pub created_at: i64,
    /// Set on the boards of a family: which family, scope and time window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<BoardWindow>,
    /// When the window's results were sealed, ms since the epoch (by the seal use case).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_at: Option<i64>,
    /// Whether the index keeps the board's distinct scores, which `rank_mode=dense`
    /// reads need. Fixed at creation; boards stored before it existed keep them.
    #[serde(default = "stored_without_the_setting")]
    pub dense_ranks: bool,
    /// Whether DynamoDB keeps the board in rank order too (the `by_rank` index entry of
    /// every standing, one write unit a change): what serves its reads while Redis
    /// cannot and its seal's walk. Without it those reads answer the last known answer
    /// or 503 `rank_unavailable` (and, past Redis's retention of a closed window, 410
    /// `window_expired`), and the seal reads the whole board and sorts it
    /// (docs/cost.md). Fixed at creation; boards stored before it existed keep it.
    #[serde(default = "stored_without_the_setting")]
    pub rank_index: bool,
    /// Set on a tournament's boards: the tournament whose results alone it takes
    /// (`tournament::Tournament::board`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tournament: Option<String>,
    /// Its scores' decimal places and how replies write them (docs/decimals.md). Fixed
    /// at creation; boards stored before it existed keep integers.
    #[serde(default, skip_serializing_if = "ScoreFormat::is_integer")]
    pub scores: ScoreFormat,
    /// The rules that hold a suspicious result for review (docs/integrity.md); a family
    /// board's are its family's when the board was created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub integrity: Option<Integrity>,
    /// Its latest reset (docs/operations.md): while it runs, from its fence on, the
    /// board takes no result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<BoardReset>,
    /// What a standalone board's places earn when a reset seals them (docs/rewards.md);
    /// a family's boards use their family's table, a tournament's its tournament's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewards: Option<crate::reward::RewardTable>,
}

/// A board or family stored before `dense_ranks` (or `rank_index`) existed kept dense
/// ranks (and its rank order in DynamoDB), and keeps them.
pub fn stored_without_the_setting() -> bool {
    true
}

/// A board or family created without saying: no dense ranks. Keeping them doubles the
/// index's work on every change, for a rank mode few games use (docs/cost.md).
pub fn dense_unless_asked() -> bool {
    false
}

/// Where a family board sits: its family, scope and time window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardWindow {
    pub game: String,
    pub mode: String,
    /// `GLOBAL` or a region.
    pub scope: String,
    #[serde(flatten)]
    pub window: TimeWindow,
    /// Late results are accepted until the window's end plus this.
    pub grace_ms: i64,
    /// On a rolling schedule's board: how far back results count, in ms
    /// (docs/schedules.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rolling_ms: Option<i64>,
}

impl Board {
    /// The board and the way its scores rank, as the index's reads take them.
    #[must_use]
    pub fn order(&self) -> crate::order::BoardOrder<'_> {
        crate::order::BoardOrder::new(&self.leaderboard_id, self.policy.direction())
    }

    /// The game whose bans apply to this board: a family board's (its window names it).
    pub fn game(&self) -> Option<&str> {
        self.window.as_ref().map(|w| w.game.as_str())
    }

    /// Refuses `rank_mode=dense` on a board created without dense ranks (its index
    /// keeps no distinct scores to count them from); every other mode is served.
    pub fn serves(&self, mode: RankMode) -> Result<(), DomainError> {
        if mode == RankMode::Dense && !self.dense_ranks {
            return Err(DomainError::DenseNotKept);
        }
        Ok(())
    }

    /// The status that applies at `now_ms`: a window past its end plus grace is CLOSED
    /// whatever its stored status says.
    pub fn effective_status(&self, now_ms: i64) -> BoardStatus {
        match &self.window {
            Some(w) if w.window.is_closed(w.grace_ms, now_ms) => BoardStatus::Closed,
            _ => self.status,
        }
    }

    /// The board's place in the list of boards, `{game}#{mode}#{board}` (a standalone
    /// board's game and mode are empty): the order a listing walks, which its prefixes
    /// select and its cursors name.
    pub fn list_key(&self) -> String {
        let (game, mode) = self
            .window
            .as_ref()
            .map_or(("", ""), |w| (w.game.as_str(), w.mode.as_str()));
        format!("{game}#{mode}#{}", self.leaderboard_id)
    }

    /// When the board stops accepting writes for good, if it is a time window.
    pub fn closes_at(&self) -> Option<i64> {
        self.window
            .as_ref()
            .and_then(|w| w.window.closes_at(w.grace_ms))
    }

    /// Whether this is one cohort's board of a tournament occurrence (its scope is
    /// `t:{tournament}:c{n}`; the occurrence's own board's is `t:{tournament}`).
    pub fn is_cohort(&self) -> bool {
        self.tournament.is_some()
            && (self.window.as_ref()).is_some_and(|w| w.scope.matches(':').count() == 2)
    }

    /// Whether a status change from the stored status to `to` is allowed: ACTIVE <->
    /// FROZEN, either -> CLOSED, nothing out of CLOSED (stored or by time).
    pub fn can_become(&self, to: BoardStatus, now_ms: i64) -> bool {
        use BoardStatus::{Active, Closed, Frozen};
        match (self.effective_status(now_ms), to) {
            (Closed, _) => false,
            (Active | Frozen, Active | Frozen | Closed) => true,
        }
    }
}

/// A player's current standing on one board: what the board orders by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub score: Score,
    /// The tie-break columns' values, encoded (empty on a board without columns).
    pub ties: Ties,
    /// When the current score was reached, ms since the Unix epoch (the tie-breaker).
    pub reached_at: i64,
    /// Increases by one on every applied change; Redis applies only newer versions.
    pub version: u64,
    /// The match that produced the current score.
    pub last_match_id: MatchId,
    /// The metadata of the result that set the standing (BEST/MIN: the best result's;
    /// SUM/LATEST: the last applied one's), if it carried any.
    pub metadata: Option<Metadata>,
}

impl Standing {
    /// The standing's position key on its board, for `player`.
    pub fn key(&self, player: &str) -> RankKey {
        RankKey {
            score: self.score,
            ties: self.ties.clone(),
            reached_at: self.reached_at,
            player: player.to_owned(),
        }
    }
}

/// What one submission does to a standing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fold {
    /// The standing changes to this (version already bumped).
    Applied(Standing),
    /// The board keeps the current standing.
    Unchanged,
}

impl Fold {
    /// The fold of a first standing on a row whose standing an operator removed at
    /// `row_version`: the player starts over at the version after it, so the index
    /// takes the new standing over the removal (and never an older change over either).
    pub fn after_removal(self, row_version: Option<u64>) -> Self {
        match (self, row_version) {
            (Self::Applied(mut s), Some(v)) => {
                s.version = v + 1;
                Self::Applied(s)
            }
            (fold, _) => fold,
        }
    }

    /// The fold with the submission's metadata on the standing it sets (a result that
    /// changes nothing leaves the standing's metadata as it was).
    pub fn carrying(self, metadata: Option<Metadata>) -> Self {
        match self {
            Self::Applied(s) => Self::Applied(Standing { metadata, ..s }),
            Self::Unchanged => Self::Unchanged,
        }
    }
}

impl Policy {
    /// Folds one submission (`score` with its tie-break values `ties`, on a board of
    /// `columns`) into the current standing.
    ///
    /// BEST and MIN compare the whole tuple: the score in the board's direction, then
    /// the columns in theirs. Ties on every column keep the earlier standing, so the
    /// player who reached a result first stays ahead. SUM adds the score and each
    /// column; a delta of 0 on all of them changes nothing. A SUM total leaving the
    /// exact range is refused with [`DomainError::ScoreOutOfRange`].
    pub fn fold(
        self,
        columns: &Columns,
        current: Option<&Standing>,
        (score, ties): (Score, &Ties),
        match_id: &MatchId,
        now_ms: i64,
    ) -> Result<Fold, DomainError> {
        let next = |score: Score, ties: Ties| {
            Fold::Applied(Standing {
                score,
                ties,
                reached_at: now_ms,
                version: current.map_or(1, |c| c.version + 1),
                last_match_id: match_id.clone(),
                metadata: None,
            })
        };
        let Some(cur) = current else {
            return Ok(next(score, ties.clone()));
        };
        // Strictly better in the board's order: the score first, then the ties' bytes
        // (which are the columns' order, see `tiebreak`).
        let better = |score_better: bool| {
            score_better || (score == cur.score && ties.as_str() < cur.ties.as_str())
        };
        Ok(match self {
            Self::Best if better(score > cur.score) => next(score, ties.clone()),
            Self::Min if better(score < cur.score) => next(score, ties.clone()),
            Self::Latest => next(score, ties.clone()),
            Self::Sum if !is_zero(columns, score, ties) => next(
                Score::new("score total", cur.score.get() + score.get())?,
                columns.add(&cur.ties, ties)?,
            ),
            _ => Fold::Unchanged,
        })
    }
}

/// `op: set`, an operator's correction: the standing becomes exactly `(score, ties)`,
/// reached now, whatever the policy (a BEST board's score may go down, a SUM total is
/// replaced). The same standing again changes nothing, so the player keeps their place
/// among equal scores.
pub fn correct(
    current: Option<&Standing>,
    (score, ties): (Score, &Ties),
    match_id: &MatchId,
    now_ms: i64,
) -> Fold {
    if current.is_some_and(|c| c.score == score && c.ties == *ties) {
        return Fold::Unchanged;
    }
    Fold::Applied(Standing {
        score,
        ties: ties.clone(),
        reached_at: now_ms,
        version: current.map_or(1, |c| c.version + 1),
        last_match_id: match_id.clone(),
        metadata: None,
    })
}

/// Whether a SUM delta adds nothing: a zero score and zero in every column.
fn is_zero(columns: &Columns, score: Score, ties: &Ties) -> bool {
    score == Score::ZERO
        && columns
            .values(ties)
            .is_none_or(|values| values.iter().all(|v| *v == 0))
}

#[cfg(test)]
mod tests;
