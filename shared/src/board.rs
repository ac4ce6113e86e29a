//! Leaderboard definitions: the write [`Policy`] fixed at creation, the lifecycle
//! [`BoardStatus`], and the fold that turns a submitted score into a new standing.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::decimal::ScoreFormat;
use crate::error::DomainError;
use crate::ids::{LeaderboardId, MatchId};
use crate::order::{Direction, RankMode};
use crate::profile::Metadata;
use crate::score::Score;
use crate::window::TimeWindow;

/// How a board combines a player's submissions. Fixed when the board is created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Policy {
    /// Highest score wins (the default).
    #[default]
    Best,
    /// Lowest score wins, ranked ascending (race times).
    Min,
    /// The last accepted submission wins.
    Latest,
    /// Submissions accumulate; each distinct match counts once.
    Sum,
}

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
}

impl Board {
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
    /// The rank order of this policy's boards.
    pub fn direction(self) -> Direction {
        match self {
            Self::Min => Direction::Asc,
            Self::Best | Self::Latest | Self::Sum => Direction::Desc,
        }
    }

    /// Folds one submission into the current standing.
    ///
    /// Ties keep the earlier standing (BEST/MIN), so the player who reached a score
    /// first stays ahead. A SUM delta of 0 changes nothing. A SUM total leaving the
    /// exact range is refused with [`DomainError::ScoreOutOfRange`].
    pub fn fold(
        self,
        current: Option<&Standing>,
        submitted: Score,
        match_id: &MatchId,
        now_ms: i64,
    ) -> Result<Fold, DomainError> {
        let next = |score: Score| {
            Fold::Applied(Standing {
                score,
                reached_at: now_ms,
                version: current.map_or(1, |c| c.version + 1),
                last_match_id: match_id.clone(),
                metadata: None,
            })
        };
        let Some(cur) = current else {
            return Ok(next(submitted));
        };
        Ok(match self {
            Self::Best if submitted > cur.score => next(submitted),
            Self::Min if submitted < cur.score => next(submitted),
            Self::Latest => next(submitted),
            Self::Sum if submitted.get() != 0 => next(Score::new(
                "score total",
                cur.score.get() + submitted.get(),
            )?),
            _ => Fold::Unchanged,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boards_stored_before_the_setting_keep_dense_ranks_and_only_dense_is_refused_without() {
        let stored = serde_json::json!({
            "leaderboard_id": "b1", "policy": "BEST", "status": "ACTIVE", "created_at": 0
        });
        let mut board: Board = serde_json::from_value(stored).unwrap();
        assert!(board.dense_ranks);
        assert!(board.serves(RankMode::Dense).is_ok());
        board.dense_ranks = false;
        assert!(board.serves(RankMode::Unique).is_ok());
        assert!(board.serves(RankMode::Competition).is_ok());
        let refused = board.serves(RankMode::Dense).unwrap_err();
        assert!(refused.to_string().contains("dense_ranks"), "{refused}");
    }

    fn standing(score: i64, version: u64) -> Standing {
        Standing {
            metadata: None,
            score: Score::new("s", score).unwrap(),
            reached_at: 1_000,
            version,
            last_match_id: MatchId::parse("old").unwrap(),
        }
    }

    fn fold(policy: Policy, cur: Option<&Standing>, score: i64) -> Fold {
        let m = MatchId::parse("m").unwrap();
        policy
            .fold(cur, Score::new("s", score).unwrap(), &m, 2_000)
            .unwrap()
    }

    #[test]
    fn a_fold_carries_the_results_metadata_only_when_it_sets_the_standing() {
        let md = crate::profile::Metadata::parse(serde_json::json!({"car": "gt3"})).ok();
        let cur = Standing {
            metadata: crate::profile::Metadata::parse(serde_json::json!({"car": "old"})).ok(),
            ..standing(10, 1)
        };
        match fold(Policy::Best, Some(&cur), 20).carrying(md.clone()) {
            Fold::Applied(s) => assert_eq!(s.metadata, md),
            Fold::Unchanged => panic!("a better score applies"),
        }
        // A worse result changes nothing: the standing keeps its own metadata.
        assert_eq!(
            fold(Policy::Best, Some(&cur), 5).carrying(md),
            Fold::Unchanged
        );
    }

    fn applied_score(f: Fold) -> Option<(i64, u64)> {
        match f {
            Fold::Applied(s) => Some((s.score.get(), s.version)),
            Fold::Unchanged => None,
        }
    }

    #[test]
    fn first_submission_always_applies_at_version_one() {
        for p in [Policy::Best, Policy::Min, Policy::Latest, Policy::Sum] {
            assert_eq!(applied_score(fold(p, None, 7)), Some((7, 1)));
        }
    }

    #[test]
    fn best_keeps_the_maximum_and_ties_keep_the_earlier_standing() {
        let cur = standing(10, 3);
        assert_eq!(
            applied_score(fold(Policy::Best, Some(&cur), 11)),
            Some((11, 4))
        );
        assert_eq!(fold(Policy::Best, Some(&cur), 10), Fold::Unchanged);
        assert_eq!(fold(Policy::Best, Some(&cur), -5), Fold::Unchanged);
    }

    #[test]
    fn min_keeps_the_minimum() {
        let cur = standing(10, 1);
        assert_eq!(
            applied_score(fold(Policy::Min, Some(&cur), 9)),
            Some((9, 2))
        );
        assert_eq!(fold(Policy::Min, Some(&cur), 10), Fold::Unchanged);
    }

    #[test]
    fn latest_always_applies() {
        let cur = standing(10, 1);
        assert_eq!(
            applied_score(fold(Policy::Latest, Some(&cur), 3)),
            Some((3, 2))
        );
    }

    #[test]
    fn sum_accumulates_and_refuses_leaving_the_exact_range() {
        let cur = standing(10, 1);
        assert_eq!(
            applied_score(fold(Policy::Sum, Some(&cur), -4)),
            Some((6, 2))
        );
        assert_eq!(fold(Policy::Sum, Some(&cur), 0), Fold::Unchanged);
        let near = standing(crate::score::MAX_ABS_SCORE, 1);
        let m = MatchId::parse("m").unwrap();
        let one = Score::new("s", 1).unwrap();
        assert!(matches!(
            Policy::Sum.fold(Some(&near), one, &m, 0),
            Err(DomainError::ScoreOutOfRange { .. })
        ));
    }

    #[test]
    fn min_boards_rank_ascending() {
        assert_eq!(Policy::Min.direction(), Direction::Asc);
        assert_eq!(Policy::Best.direction(), Direction::Desc);
    }
}
