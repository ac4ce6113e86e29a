//! A single result, as `POST /leaderboards/{lb}/players/{p}/score` sends it: the board
//! loaded (a tournament's boards take results through the tournament), the write path's
//! stages run ([`crate::service::write`]), and what it did counted.

use tracing::instrument;

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::write::reply::IngestReply;
use crate::service::write::request::SubmitScore;
use crate::service::write::{self, Prepared, check_ban, check_event_ts};
use crate::store::{
    Consistency, IngestStore, ModerationStore, RankIndex, StandingStore, TournamentStore,
};
use leaderboard_rules::board::Board;

/// Records one submission; see the module docs for the protocol.
#[instrument(skip(ctx), fields(board = %req.board, player = %req.player, match_id = %req.match_id))]
pub async fn submit_score<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    let now = ctx.clock.now();
    check_event_ts(ctx, req.event_ts, now)?;
    let board = ctx.boards.current(&ctx.store, &req.board).await?;
    if let Some(tournament) = &board.tournament {
        return Err(ServiceError::TournamentBoard {
            lb: req.board,
            tournament: tournament.clone(),
        });
    }
    submit_to(ctx, &board, req).await
}

/// Records one submission on an already loaded board.
async fn submit_to<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    match write::prepare(ctx, board, &req, Consistency::Strong).await? {
        Prepared::Replay(reply) => Ok(reply),
        Prepared::Write(row) => {
            if let Some(game) = board.game() {
                check_ban(ctx, game, &req.player).await?;
            }
            let reply = write::write(ctx, board, req, row, None).await?;
            tally(board.game(), &reply);
            Ok(reply)
        }
    }
}

/// Counts a result recorded now (not a retry's replay): `ResultsAccepted`, and
/// `ResultsImproved` when it moved the player's standing (the dashboard's "improving
/// results"); or, held, `ResultsHeld` by game. By `Game` on a board of a game (the
/// console's overview).
fn tally(game: Option<&str>, reply: &IngestReply) {
    if reply.replayed {
        return;
    }
    // A held result is counted as held (`ResultsHeld`, by the hold), not as accepted.
    if reply.held.is_some() {
        return held_in(game);
    }
    accepted_in(game);
    crate::service::metrics::tally("ResultsImproved", u64::from(reply.update_applied));
}

/// Counts one result accepted now: `ResultsAccepted`, and by `Game` when it has one (a
/// match posted to a family counts once, however many of its boards it changed).
pub(crate) fn accepted_in(game: Option<&str>) {
    crate::service::metrics::tally("ResultsAccepted", 1);
    if let Some(game) = game {
        crate::service::metrics::tally_game("ResultsAccepted", game, 1);
    }
}

/// Counts one result held now by `game` (the boards' holds are `ResultsHeld` without a
/// dimension, one per board: [`crate::service::write::commit`]).
pub(crate) fn held_in(game: Option<&str>) {
    if let Some(game) = game {
        crate::service::metrics::tally_game("ResultsHeld", game, 1);
    }
}
