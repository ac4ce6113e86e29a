//! The player's place after a write: the write-through to the rank index (one round
//! trip), or the place read before it when nothing changed; an index that cannot answer
//! leaves `rank` null and reports the board for repair when it is not ready.

use tracing::warn;

use super::receipt::{IngestReply, replay};
use super::request::SubmitScore;
use crate::service::{Context, ServiceError};
use crate::store::{Health, IndexEntry, IndexError, RankIndex, Row, StandingStore};
use leaderboard_rules::board::{Board, Standing};
use leaderboard_rules::order::{Direction, RankMode};
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

/// The player's place before this submission, when asked for (`None` otherwise): its
/// rank goes into the receipt, and a result that changes nothing answers with it, so
/// that such a result costs one index round trip, not two.
pub(super) async fn place_before<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Option<Result<Placed, IndexError>> {
    if !req.want_previous_rank {
        return None;
    }
    let placed = placed_now(ctx, req, dir).await;
    if let Err(error) = &placed {
        warn!(%error, "previous rank unavailable");
    }
    Some(placed)
}

/// The player's place on the board now (one index read).
pub(super) async fn placed_now<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Result<Placed, IndexError> {
    ctx.index
        .around(&req.board, dir, &req.player, 0, RankMode::Unique)
        .await
        .map(|a| a.map_or(Placed::Unranked, |a| Placed::At(a.rank, a.total)))
}

/// Fills in the rank: applies `standing` to the index (write-through) or, when nothing
/// changed, takes the place already `known` or reads the player's current one. Index
/// failures leave `rank` null.
pub(super) async fn place<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
    standing: Option<&Standing>,
    expire_at: Option<i64>,
    known: Option<Result<Placed, IndexError>>,
    reply: &mut IngestReply,
) {
    if !ctx.settings.write_through {
        return;
    }
    let placed = match (standing, known) {
        (Some(s), _) => {
            let entry = IndexEntry::standing(&req.board, dir, req.player.as_str(), s, expire_at);
            ctx.index
                .apply(&entry)
                .await
                .map(|p| match (p.health, p.place) {
                    (Health::Ready, Some(at)) => Placed::At(at.rank, at.total),
                    // Lost to a newer removal: not on the board, which is no outage.
                    (Health::Ready, None) => Placed::Unranked,
                    // A rank from an incomplete index (wiped, stale, rebuilding) would be wrong.
                    (other, _) => Placed::NotReady(other),
                })
        }
        (None, Some(known)) => known,
        (None, None) => placed_now(ctx, req, dir).await,
    };
    match placed {
        Ok(Placed::At(rank, total)) => {
            reply.rank = Some(rank);
            reply.total = Some(total);
        }
        Ok(Placed::Unranked) => {}
        Ok(Placed::NotReady(health)) | Err(IndexError::NotReady(health)) => {
            ctx.repairs.report(&ctx.index, &req.board, health).await;
        }
        Err(error) => warn!(%error, "rank index unavailable; the stream will catch it up"),
    }
}

/// Where the write-through found the player.
pub(super) enum Placed {
    At(u64, u64),
    /// Not on the board (a replayed receipt whose standing is gone from the index, or a
    /// write-through that lost to a newer removal).
    Unranked,
    /// The board's index is not complete: no rank to give.
    NotReady(Health),
}

/// A retry answered from its receipt ([`replay`]) and placed as the board stands now;
/// `None` if the match is new to the row.
pub(super) async fn replayed<S: StandingStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: &SubmitScore,
    result: &(Score, Ties),
    row: &Row,
) -> Result<Option<IngestReply>, ServiceError> {
    let Some(mut reply) = replay(ctx, board, req, result, row).await? else {
        return Ok(None);
    };
    place(
        ctx,
        req,
        board.policy.direction(),
        None,
        None,
        None,
        &mut reply,
    )
    .await;
    Ok(Some(reply))
}
