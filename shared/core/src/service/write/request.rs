//! A result as the API takes it: the body, its `op` (the board's policy, SUM's `incr`, an
//! operator's `set` with its reason), and the validated [`SubmitScore`] with its value at a
//! board's places and columns.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_rules::board::{Board, Policy};
use leaderboard_rules::decimal::Amount;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::{Ties, read_subscores};

/// Body of `POST /leaderboards/{lb}/players/{p}/score`. Fields are checked one by one in
/// [`SubmitScore::new`] so each error names its field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreBody {
    /// Read as written (a number's literal or a string), so a decimal is exact
    /// (docs/decimals.md).
    pub new_score: Option<Box<RawValue>>,
    pub match_id: Option<serde_json::Value>,
    /// When the match ended (RFC 3339 or ms); defaults to now. On a time-window board it
    /// must fall inside the window.
    pub event_ts: Option<serde_json::Value>,
    /// A JSON object of at most 512 bytes, kept with the standing when this result sets
    /// it and shown on the player's row.
    pub metadata: Option<serde_json::Value>,
    /// One integer per tie-break column of the board (docs/tiebreaks.md).
    pub subscores: Option<serde_json::Value>,
    /// `"set"` (an operator's correction, with `reason`) or `"incr"` (SUM's own);
    /// absent: the board's policy (see [`Op`]).
    pub op: Option<serde_json::Value>,
    /// Why a correction (`op: set`) is made; only with it. Kept in the audit trail.
    pub reason: Option<serde_json::Value>,
}

/// What a result does to the player's standing: the board's policy, or (`op: set`) an
/// operator's correction to exactly its score.
#[derive(Debug, Clone, Default)]
pub enum Op {
    /// The board's policy: `op` absent, or `incr`, which only a SUM board takes (it is
    /// what SUM does; any other board answers 422 `op_not_allowed`).
    #[default]
    Policy,
    Incr,
    /// `op: set`: the standing becomes this result's score (and subscores) whatever the
    /// policy, audited in the same write as the row (`board::correct`).
    Set(Correction),
}

/// Who corrects a standing, and why.
#[derive(Debug, Clone)]
pub struct Correction {
    pub actor: Operator,
    pub reason: Reason,
}

impl Op {
    /// Reads `op` and `reason`: a reason comes only with `op: set`, which needs one.
    fn parse(
        op: Option<&serde_json::Value>,
        reason: Option<serde_json::Value>,
        actor: &Operator,
    ) -> Result<Self, DomainError> {
        let op = match op {
            None => Self::Policy,
            Some(v) if v == "incr" => Self::Incr,
            Some(v) if v == "set" => {
                let reason = Reason::parse(ReasonBody { reason })?;
                return Ok(Self::Set(Correction {
                    actor: actor.clone(),
                    reason,
                }));
            }
            Some(_) => return Err(DomainError::invalid("op", "must be \"set\" or \"incr\"")),
        };
        match reason {
            Some(_) => Err(DomainError::invalid("reason", "only with op set")),
            None => Ok(op),
        }
    }

    /// Whether this is an operator's correction.
    pub fn is_set(&self) -> bool {
        matches!(self, Self::Set(_))
    }
}

/// A validated submission.
#[derive(Debug, Clone)]
pub struct SubmitScore {
    pub board: LeaderboardId,
    pub player: PlayerId,
    pub match_id: MatchId,
    /// The score as written; read at the board's places ([`Amount::scaled`]).
    pub score: Amount,
    /// The tie-break values, as many as the board has columns
    /// ([`leaderboard_rules::tiebreak::Columns::encode`]).
    pub subscores: Vec<Score>,
    /// When the match ended, ms; `None` means now.
    pub event_ts: Option<i64>,
    /// Read the player's rank before the write and keep it in the receipt.
    pub want_previous_rank: bool,
    /// The reached-at to record if the score changes; `None` means the commit time.
    /// A fan-out gives all its boards the request's time, so ties break alike on each.
    pub reached_at: Option<i64>,
    /// The result's metadata, kept with the standing if this result sets it.
    pub metadata: Option<Metadata>,
    /// What the result does to the standing (`op`).
    pub op: Op,
}

impl SubmitScore {
    /// A plain result: `score` by `player` in `match_id` on `board`, now, with no
    /// tie-break values or metadata.
    pub fn plain(board: LeaderboardId, player: PlayerId, match_id: MatchId, score: Amount) -> Self {
        Self {
            op: Op::default(),
            board,
            player,
            match_id,
            score,
            subscores: Vec::new(),
            event_ts: None,
            want_previous_rank: false,
            reached_at: None,
            metadata: None,
        }
    }

    /// A result of `body` on `board`, sent by `actor` (the caller's IAM principal, which
    /// a correction's audit record names).
    pub fn new(
        board: LeaderboardId,
        player: PlayerId,
        body: ScoreBody,
        actor: &Operator,
    ) -> Result<Self, DomainError> {
        let score = match body.new_score {
            Some(raw) => Amount::read("new_score", &raw)?,
            None => return Err(DomainError::invalid("new_score", "is required")),
        };
        let match_id = match body.match_id {
            Some(serde_json::Value::String(s)) => MatchId::parse(&s)?,
            Some(_) => return Err(DomainError::invalid("match_id", "must be a string")),
            None => return Err(DomainError::invalid("match_id", "is required")),
        };
        let event_ts = body
            .event_ts
            .as_ref()
            .map(|v| leaderboard_rules::time::parse_ts("event_ts", v))
            .transpose()?;
        let metadata = body.metadata.map(Metadata::parse).transpose()?;
        let subscores = read_subscores(body.subscores.as_ref())?;
        let op = Op::parse(body.op.as_ref(), body.reason, actor)?;
        Ok(Self {
            op,
            board,
            player,
            match_id,
            score,
            subscores,
            event_ts,
            want_previous_rank: true,
            reached_at: None,
            metadata,
        })
    }
}

impl SubmitScore {
    /// The result as `board` keeps it: the score at its places and the tie-break values
    /// at its columns.
    pub(crate) fn on(&self, board: &Board) -> Result<(Score, Ties), DomainError> {
        if matches!(self.op, Op::Incr) && board.policy != Policy::Sum {
            return Err(DomainError::OpNotAllowed {
                op: "incr",
                policy: board.policy.as_str(),
            });
        }
        // A correction of a rolling board's standing would age out with the window.
        if self.op.is_set() && board.rolling().is_some() {
            return Err(DomainError::OpNotAllowed {
                op: "set",
                policy: "rolling",
            });
        }
        let score = self.score.scaled(board.scores.decimals)?;
        let ties = board.scores.tiebreaks.encode(&self.subscores)?;
        Ok((score, ties))
    }
}
