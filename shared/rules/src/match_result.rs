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

/// Most players' results one `POST /matches` takes.
pub const MATCH_PLAYERS_MAX: usize = 100;

/// Body of `POST /matches`: one match and its players' results; checked in
/// [`WholeMatch::new`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WholeMatchBody {
    pub game: Option<String>,
    pub mode: Option<String>,
    /// The match's region, each player's unless their entry names their own.
    pub region: Option<String>,
    pub match_id: Option<String>,
    pub event_ts: Option<serde_json::Value>,
    pub players: Option<Vec<PlayerResultBody>>,
}

/// One player's entry in [`WholeMatchBody`].
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlayerResultBody {
    pub player_id: Option<String>,
    pub score: Option<Box<RawValue>>,
    pub subscores: Option<serde_json::Value>,
    pub metadata: Option<serde_json::Value>,
    pub region: Option<String>,
}

/// A validated `POST /matches`, checked whole: the match's fields, every player's id
/// (each once) and every value's form (a score that is no number, a region that is no
/// name); a refusal names the field (`players[3].score`). What a board's rules refuse
/// of a well-formed result (a score out of its range, a ban, a hold) is that player's
/// outcome alone, found when it is recorded.
#[derive(Debug)]
pub struct WholeMatch {
    pub game: String,
    pub mode: String,
    pub match_id: MatchId,
    pub event_ts: Option<i64>,
    /// Each player's result, in the request's order.
    pub players: Vec<MatchResult>,
}

impl WholeMatch {
    pub fn new(body: WholeMatchBody) -> Result<Self, DomainError> {
        let game = parse_name("game", required("game", &body.game)?)?;
        let mode = parse_name("mode", required("mode", &body.mode)?)?;
        parse_name("region", required("region", &body.region)?)?;
        let match_id = MatchId::parse(required("match_id", &body.match_id)?)?;
        let event_ts = (body.event_ts.as_ref())
            .map(|v| parse_ts("event_ts", v))
            .transpose()?;
        let entries = body.players.unwrap_or_default();
        if entries.is_empty() || entries.len() > MATCH_PLAYERS_MAX {
            let reason = format!("must hold 1 to {MATCH_PLAYERS_MAX} players' results");
            return Err(DomainError::invalid("players", reason));
        }
        let mut seen = std::collections::HashSet::new();
        let mut players = Vec::with_capacity(entries.len());
        for (i, entry) in entries.into_iter().enumerate() {
            let id = required("players.player_id", &entry.player_id)
                .and_then(PlayerId::parse)
                .map_err(|e| e.for_field("players.player_id").in_item("players", i))?;
            if !seen.insert(id.clone()) {
                return Err(DomainError::Repeated {
                    field: format!("players[{i}].player_id").into(),
                    reason: "appears twice; a match takes each player once".into(),
                });
            }
            let result = MatchResult::new(MatchBody {
                game: Some(game.clone()),
                mode: Some(mode.clone()),
                region: entry.region.or_else(|| body.region.clone()),
                player_id: entry.player_id,
                match_id: Some(match_id.as_str().to_owned()),
                score: entry.score,
                event_ts: body.event_ts.clone(),
                metadata: entry.metadata,
                subscores: entry.subscores,
            });
            players.push(result.map_err(|e| match e {
                DomainError::Invalid { field, reason } => {
                    let field = format!("players[{i}].{field}").into();
                    DomainError::Invalid { field, reason }
                }
                other => other,
            })?);
        }
        Ok(Self {
            game,
            mode,
            match_id,
            event_ts,
            players,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(players: &str) -> Result<WholeMatch, DomainError> {
        let body = format!(
            r#"{{"game": "g", "mode": "m", "region": "eu", "match_id": "x1", "players": {players}}}"#
        );
        WholeMatch::new(serde_json::from_str(&body).unwrap())
    }

    #[test]
    fn each_players_result_is_the_matchs_with_their_own_fields() {
        let m = whole(r#"[{"player_id": "a", "score": 5}, {"player_id": "b", "score": "7.5"}]"#)
            .unwrap();
        let got: Vec<_> = (m.players.iter())
            .map(|r| (r.player.as_str(), r.region.as_str(), r.match_id.as_str()))
            .collect();
        assert_eq!(got, [("a", "eu", "x1"), ("b", "eu", "x1")]);
    }

    #[test]
    fn a_player_names_their_own_region() {
        let m = whole(r#"[{"player_id": "a", "score": 1, "region": "na"}]"#).unwrap();
        assert_eq!(m.players[0].region, "na");
    }

    #[test]
    fn the_players_list_is_the_whole_requests_to_get_right() {
        let field = |players: &str| whole(players).unwrap_err().field().map(str::to_owned);
        assert_eq!(field("[]").as_deref(), Some("players"));
        let many: Vec<String> = (0..=MATCH_PLAYERS_MAX)
            .map(|i| format!(r#"{{"player_id": "p{i}", "score": 1}}"#))
            .collect();
        assert_eq!(
            field(&format!("[{}]", many.join(","))).as_deref(),
            Some("players")
        );
        let twice = r#"[{"player_id": "a", "score": 1}, {"player_id": "a", "score": 2}]"#;
        assert!(matches!(whole(twice), Err(DomainError::Repeated { .. })));
        assert_eq!(field(twice).as_deref(), Some("players[1].player_id"));
        let form = r#"[{"player_id": "a", "score": 1}, {"player_id": "b", "score": "x"}]"#;
        assert_eq!(field(form).as_deref(), Some("players[1].score"));
        let region = r#"[{"player_id": "a", "score": 1, "region": ""}]"#;
        assert_eq!(field(region).as_deref(), Some("players[0].region"));
        let unnamed = r#"[{"player_id": "a", "score": 1}, {"score": 2}]"#;
        assert_eq!(field(unnamed).as_deref(), Some("players[1].player_id"));
        let bad = r#"[{"player_id": "a b", "score": 1}]"#;
        assert_eq!(field(bad).as_deref(), Some("players[0].player_id"));
    }
}
