//! `POST /leaderboards/{lb}/players/{p}/score` (one board), `POST /scores` (one match
//! result to every window of its family) and `POST /matches` (a whole match's results).

use lambda_runtime::{Error, LambdaEvent};
use leaderboard::edge::http::{self, Request, Response};
use leaderboard::edge::reply::ItemRefused;
use leaderboard::edge::{body, reply};
use leaderboard_core::service::Context;
use leaderboard_core::service::ingest;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::scores::{self, MatchReply, MatchResult, PlayerOutcome, WholeMatch};
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::store::{RankIndex, ScoreStore};
use leaderboard_rules::ids::{MatchId, PlayerId};
use serde::Serialize;

#[cfg(test)]
mod tests;

/// The use case's future is boxed: it is deep enough to overflow the compiler's layout
/// queries once the handler is also instantiated over the in-memory ports (its tests).
pub async fn handle<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    event: LambdaEvent<Request>,
) -> Result<Response, Error> {
    reply::routed(&event, async |req, route| match route {
        // A result held for review (on any of its boards) answers 202 (docs/integrity.md).
        "POST /scores" => {
            let done = async {
                let m = MatchResult::new(body::json_body(req)?)?;
                Box::pin(scores::submit_match(ctx, m)).await
            };
            match done.await {
                Ok(reply) => reply::json(if reply.held() { 202 } else { 200 }, &reply),
                Err(e) => reply::respond::<()>(200, Err(e)),
            }
        }
        // Every player's outcome with the status it would have had alone (200, 202 held, a
        // refusal's 4xx); the request fails only as a whole (docs/game-server.md).
        "POST /matches" => {
            let done = async {
                let body = body::json_body_within(req, body::MAX_MATCH_BODY_BYTES)?;
                let m = WholeMatch::new(body)?;
                let match_id = m.match_id.clone();
                let players = Box::pin(scores::submit_whole_match(ctx, m)).await?;
                Ok((match_id, players))
            };
            match done.await {
                Ok((match_id, players)) => {
                    reply::json(200, &whole_match_reply(&match_id, &players))
                }
                Err(e) => reply::respond::<()>(200, Err(e)),
            }
        }
        "POST /leaderboards/{lb}/players/{p}/score" => {
            let done = async {
                let (lb, player) = http::board_player(req)?;
                let actor = Operator(http::operator(req));
                let cmd = SubmitScore::new(lb, player, body::json_body(req)?, &actor)?;
                Box::pin(ingest::submit_score(ctx, cmd)).await
            };
            match done.await {
                Ok(reply) => reply::json(if reply.held.is_some() { 202 } else { 200 }, &reply),
                Err(e) => reply::respond::<()>(200, Err(e)),
            }
        }
        _ => reply::unknown_route(req),
    })
    .await
}

/// The reply of `POST /matches`: the match, and each player's outcome in the request's
/// order, as `POST /scores` answers it (with its `status`) or as its refusal.
#[derive(Serialize)]
struct WholeMatchReply<'a> {
    match_id: &'a MatchId,
    players: Vec<PlayerReply<'a>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum PlayerReply<'a> {
    Recorded {
        status: u16,
        #[serde(flatten)]
        reply: &'a MatchReply,
    },
    Refused {
        player_id: &'a PlayerId,
        #[serde(flatten)]
        refused: ItemRefused<'a>,
    },
}

fn whole_match_reply<'a>(
    match_id: &'a MatchId,
    players: &'a [PlayerOutcome],
) -> WholeMatchReply<'a> {
    let players = (players.iter())
        .map(|(player_id, outcome)| match outcome {
            Ok(reply) => PlayerReply::Recorded {
                status: if reply.held() { 202 } else { 200 },
                reply,
            },
            Err(e) => PlayerReply::Refused {
                player_id,
                refused: ItemRefused::of(e),
            },
        })
        .collect();
    WholeMatchReply { match_id, players }
}
