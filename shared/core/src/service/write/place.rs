//! Stage 4, place: the player's place after a write (or a replay): the write-through
//! to the rank index (one round trip), or the place read before it when nothing
//! changed; an index that cannot answer leaves `rank` null and reports the board for
//! repair when it is not ready.

use futures::future::join_all;
use tracing::warn;

use crate::service::Context;
use crate::store::{Health, IndexEntry, IndexError, Placement, RankIndex};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
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
    let placed = placed_now(ctx, &req.board, &req.player, dir).await;
    if let Err(error) = &placed {
        warn!(%error, "previous rank unavailable");
    }
    Some(placed)
}

/// The player's place on the board now (one index read).
async fn placed_now<S, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    player: &PlayerId,
    dir: Direction,
) -> Result<Placed, IndexError> {
    ctx.index
        .around(BoardOrder::new(lb, dir), player, 0, RankMode::Unique)
        .await
        .map(|a| a.map_or(Placed::Unranked, |a| Placed::At(a.rank, a.total)))
}

/// How the player's place after a write is found.
pub(crate) enum PlaceBy {
    /// The write moved the standing: apply it to the index (write-through), which
    /// answers the place.
    Applying(IndexEntry),
    /// Nothing moved and the place was read before the write.
    Known(Result<Placed, IndexError>),
    /// Nothing moved: read the place now. `current` is the standing the row kept (as the
    /// index would hold it), which a batch applies again instead of reading: an apply of
    /// the version the index holds changes nothing and answers the place.
    Reading { current: Option<IndexEntry> },
}

/// A write's reply before stage 4: the place still to find, as `by` says.
pub(crate) struct Unplaced {
    pub(crate) dir: Direction,
    pub(crate) by: PlaceBy,
    pub(crate) reply: IngestReply,
}

impl Unplaced {
    /// The board the reply is about.
    pub(crate) fn board(&self) -> &LeaderboardId {
        &self.reply.leaderboard_id
    }
}

/// Fills in the reply's rank, found as `by` says; index failures leave `rank` null (and
/// an index that is not complete is reported for repair).
pub(super) async fn place<S, I: RankIndex>(ctx: &Context<S, I>, u: Unplaced) -> IngestReply {
    if !ctx.settings.write_through {
        return u.reply;
    }
    let placed = match u.by {
        PlaceBy::Applying(entry) => ctx.index.apply(&entry).await.map(placed),
        PlaceBy::Known(known) => known,
        PlaceBy::Reading { .. } => {
            placed_now(ctx, &u.reply.leaderboard_id, &u.reply.player_id, u.dir).await
        }
    };
    fill(ctx, placed, u.reply).await
}

/// Stage 4 for many writes' replies at once (`record`'s: a match's players on its
/// boards): every standing to apply (or apply again) goes to the index in one round trip
/// per slot ([`crate::store::IndexWrites::apply_each`]); the rest as [`place`] finds them. Replies in
/// order.
pub(crate) async fn place_all<S, I: RankIndex>(
    ctx: &Context<S, I>,
    all: Vec<Unplaced>,
) -> Vec<IngestReply> {
    if !ctx.settings.write_through {
        return all.into_iter().map(|u| u.reply).collect();
    }
    // Where each reply's place comes from: the batch (its index in `entries`), a read
    // of its own (with its board's order), or what the write already knew.
    let mut entries = Vec::new();
    let mut applying = Vec::new();
    let mut reads = Vec::new();
    let mut found: Vec<Option<Result<Placed, IndexError>>> = Vec::new();
    let mut replies = Vec::new();
    for (i, u) in all.into_iter().enumerate() {
        found.push(match u.by {
            PlaceBy::Applying(entry)
            | PlaceBy::Reading {
                current: Some(entry),
            } => {
                entries.push(entry);
                applying.push(i);
                None
            }
            PlaceBy::Known(known) => Some(known),
            PlaceBy::Reading { current: None } => {
                reads.push((i, u.dir));
                None
            }
        });
        replies.push(u.reply);
    }
    let read_one = |&(i, dir): &(usize, Direction)| {
        let reply: &IngestReply = &replies[i];
        placed_now(ctx, &reply.leaderboard_id, &reply.player_id, dir)
    };
    let (applied, read) = tokio::join!(
        ctx.index.apply_each(&entries),
        join_all(reads.iter().map(read_one))
    );
    for (&(i, _), placed) in reads.iter().zip(read) {
        found[i] = Some(placed);
    }
    match applied {
        Ok(placements) => {
            for (&i, p) in applying.iter().zip(placements) {
                found[i] = Some(Ok(placed(p)));
            }
        }
        // Each reply's rank stays null; an index found not ready is reported by board.
        Err(error) => {
            warn!(%error, "rank index unavailable; the stream will catch it up");
            if let IndexError::NotReady(health) = error {
                for &i in &applying {
                    found[i] = Some(Ok(Placed::NotReady(health)));
                }
            }
        }
    }
    let fills = replies
        .into_iter()
        .zip(found)
        .map(async |(reply, placed)| match placed {
            Some(placed) => fill(ctx, placed, reply).await,
            None => reply,
        });
    join_all(fills).await
}

/// Where an apply left the player.
fn placed(p: Placement) -> Placed {
    match (p.health, p.place) {
        (Health::Ready, Some(at)) => Placed::At(at.rank, at.total),
        // Lost to a newer removal: not on the board, which is no outage.
        (Health::Ready, None) => Placed::Unranked,
        // A rank from an incomplete index (wiped, stale, rebuilding) would be wrong.
        (other, _) => Placed::NotReady(other),
    }
}

/// The reply with the place found; a board whose index is not complete is reported for
/// repair, and an index that failed leaves `rank` null.
async fn fill<S, I: RankIndex>(
    ctx: &Context<S, I>,
    placed: Result<Placed, IndexError>,
    mut reply: IngestReply,
) -> IngestReply {
    match placed {
        Ok(Placed::At(rank, total)) => {
            reply.rank = Some(rank);
            reply.total = Some(total);
        }
        Ok(Placed::Unranked) => {}
        Ok(Placed::NotReady(health)) | Err(IndexError::NotReady(health)) => {
            ctx.repairs
                .report(&ctx.index, &reply.leaderboard_id, health)
                .await;
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
