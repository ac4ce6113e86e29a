//! How a board combines a player's submissions, and the order its boards rank in. A leaf
//! of the rules: the board's fold (`board.rs`) and the integrity rules' judge
//! (`integrity.rs`) both read it, and neither needs the other for it.

use serde::{Deserialize, Serialize};

use crate::order::Direction;

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

impl Policy {
    /// The name the API uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Best => "BEST",
            Self::Min => "MIN",
            Self::Latest => "LATEST",
            Self::Sum => "SUM",
        }
    }

    /// The rank order of this policy's boards.
    pub fn direction(self) -> Direction {
        match self {
            Self::Min => Direction::Asc,
            Self::Best | Self::Latest | Self::Sum => Direction::Desc,
        }
    }
}
