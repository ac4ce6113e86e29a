//! A whole match in one request (`POST /matches`): each player's result recorded exactly
//! as `POST /scores` records one (every window of the family, the tournaments the player
//! is in, the integrity rules, idempotent per player and match), the players' writes
//! concurrent, and every board's write-through sent together: one index round trip per
//! slot for the whole match. A player's refusal (a ban, a rule, a bad score) is that
//! player's outcome; a backend failure fails the request, which a retry answers with
//! each player's first outcome.

use futures::stream::{self, StreamExt};
use tracing::instrument;

use super::{Fanout, MatchReply, family_of, place_recorded, record_match, tally_match};
use crate::service::{Context, ServiceError};
use crate::store::{IngestStore, RankIndex};
use leaderboard_rules::ids::PlayerId;
pub use leaderboard_rules::match_result::{WholeMatch, WholeMatchBody};

/// Players whose results are written at once; each writes its family's boards (up to 10)
/// at once, so about 160 writes are in flight.
const PLAYERS_AT_ONCE: usize = 16;

/// One player's outcome: their results (as `POST /scores` answers them) or the refusal.
pub type PlayerOutcome = (PlayerId, Result<MatchReply, ServiceError>);

/// Records every player's result of the match; see the module docs. The outcomes come
/// in the request's order. `Err` only for what fails the whole match: a time the service
/// does not take, a game and mode with no family and no tournament, a backend failure.
#[instrument(skip_all, fields(game = %m.game, mode = %m.mode, match_id = %m.match_id, players = m.players.len()))]
pub async fn submit_whole_match<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    m: WholeMatch,
) -> Result<Vec<PlayerOutcome>, ServiceError> {
    // No rank read before each write: it would cost an index round trip per player and
    // board; a match's reply has `previous_rank: null`.
    let at = Fanout::starting(ctx, m.event_ts, false)?;
    let family = family_of(ctx, &m.game, &m.mode).await?;
    let family = family.as_ref();
    let recorded: Vec<_> = stream::iter(m.players)
        .map(|result| async move {
            let player = result.player.clone();
            (player, record_match(ctx, family, result, at).await)
        })
        .buffered(PLAYERS_AT_ONCE)
        .collect()
        .await;
    let mut outcomes = Vec::with_capacity(recorded.len());
    let mut written = Vec::new();
    for (player, recorded) in recorded {
        match recorded {
            Ok(r) => {
                written.push(r);
                outcomes.push((player, None));
            }
            Err(e) if e.is_transient() || matches!(e, ServiceError::FamilyNotFound { .. }) => {
                return Err(e);
            }
            Err(e) => outcomes.push((player, Some(Err(e)))),
        }
    }
    let mut placed = place_recorded(ctx, written).await.into_iter();
    Ok(outcomes
        .into_iter()
        .map(|(player, refused)| {
            let outcome = refused.unwrap_or_else(|| {
                let reply = placed.next().expect("one placed reply per recorded player");
                tally_match(&m.game, &reply);
                Ok(reply)
            });
            (player, outcome)
        })
        .collect())
}
