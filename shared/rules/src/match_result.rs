//! A match result as `POST /scores` and the stream mappings give it ([`MatchBody`]), and
//! validated field by field ([`MatchResult`]).

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::decimal::Amount;
use crate::error::DomainError;
use crate::ids::{MatchId, PlayerId};
use crate::profile::Metadata;
use crate::score::Score;
use crate::tiebreak::read_subscores;
use crate::time::parse_ts;
use crate::window::parse_name;

/// Body of `POST /scores`; fields are checked one by one in [`MatchResult::new`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MatchBody {
    pub game: Option<String>,
    pub mode: Option<String>,
    pub region: Option<String>,
    pub player_id: Option<String>,
    pub match_id: Option<String>,
    /// Read as written, so a decimal is exact (docs/decimals.md).
    pub score: Option<Box<RawValue>>,
    pub event_ts: Option<serde_json::Value>,
    /// A JSON object of at most 512 bytes, kept with each standing this result sets.
    pub metadata: Option<serde_json::Value>,
    /// One integer per tie-break column of the family (docs/tiebreaks.md).
    pub subscores: Option<serde_json::Value>,
}

/// A validated match result.
#[derive(Debug, Clone)]
pub struct MatchResult {
    pub game: String,
    pub mode: String,
    pub region: String,
    pub player: PlayerId,
    pub match_id: MatchId,
    /// The score as written; read at the family's places ([`Amount::scaled`]).
    pub score: Amount,
    /// The tie-break values; their count is the family's to judge.
    pub subscores: Vec<Score>,
    pub event_ts: Option<i64>,
    pub metadata: Option<Metadata>,
}

fn required<'a>(field: &'static str, v: &'a Option<String>) -> Result<&'a str, DomainError> {
    v.as_deref()
        .ok_or_else(|| DomainError::invalid(field, "is required"))
}

impl MatchResult {
    pub fn new(body: MatchBody) -> Result<Self, DomainError> {
        let score = match &body.score {
            Some(raw) => Amount::read("score", raw)?,
            None => return Err(DomainError::invalid("score", "is required")),
        };
        Ok(Self {
            game: parse_name("game", required("game", &body.game)?)?,
            mode: parse_name("mode", required("mode", &body.mode)?)?,
            region: parse_name("region", required("region", &body.region)?)?,
            player: PlayerId::parse(required("player_id", &body.player_id)?)?,
            match_id: MatchId::parse(required("match_id", &body.match_id)?)?,
            score,
            subscores: read_subscores(body.subscores.as_ref())?,
            event_ts: body
                .event_ts
                .as_ref()
                .map(|v| parse_ts("event_ts", v))
                .transpose()?,
            metadata: body.metadata.map(Metadata::parse).transpose()?,
        })
    }
}
