//! Stage 4, place: the player's place after a write (or a replay): the write-through
//! to the rank index (one round trip), or the place read before it when nothing
//! changed; an index that cannot answer leaves `rank` null and reports the board for
//! repair when it is not ready.

use tracing::warn;

use crate::service::Context;
use crate::store::{Health, IndexEntry, IndexError, RankIndex};
use leaderboard_rules::board::Standing;
use leaderboard_rules::order::{BoardOrder, Direction, RankMode};

use super::reply::IngestReply;
use super::request::SubmitScore;

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
        .around(
            BoardOrder::new(&req.board, dir),
            &req.player,
            0,
            RankMode::Unique,
        )
        .await
        .map(|a| a.map_or(Placed::Unranked, |a| Placed::At(a.rank, a.total)))
}

/// How the player's place after a write is found.
pub(crate) enum PlaceBy<'a> {
    /// The write moved the standing: apply it to the index (write-through), which
    /// answers the place; `expire_at`, s, for a window board's entries.
    Applying {
        standing: &'a Standing,
        expire_at: Option<i64>,
    },
    /// Nothing moved and the place was read before the write.
    Known(Result<Placed, IndexError>),
    /// Nothing moved: read the place now.
    Reading,
}

/// Fills in the reply's rank, found as `by` says; index failures leave `rank` null (and
/// an index that is not complete is reported for repair).
pub(super) async fn place<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
    by: PlaceBy<'_>,
    mut reply: IngestReply,
) -> IngestReply {
    if !ctx.settings.write_through {
        return reply;
    }
    let placed = match by {
        PlaceBy::Applying {
            standing,
            expire_at,
        } => {
            let entry =
                IndexEntry::standing(&req.board, dir, req.player.as_str(), standing, expire_at);
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
        PlaceBy::Known(known) => known,
        PlaceBy::Reading => placed_now(ctx, req, dir).await,
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
    reply
}

/// Where the write-through found the player.
pub(crate) enum Placed {
    At(u64, u64),
    /// Not on the board (a replayed receipt whose standing is gone from the index, or a
    /// write-through that lost to a newer removal).
    Unranked,
    /// The board's index is not complete: no rank to give.
    NotReady(Health),
}
