//! A match result's fan-out: when it goes to its boards ([`Fanout`]), what it recorded
//! before its places are found ([`Recorded`]), and those places found for many results at
//! once.

use super::outcome::accepted;
use super::{BoardOutcome, MatchReply, OnWindow, Written};
use crate::service::ingest::{accepted_in, held_in};
use crate::service::write::{self, check_event_ts};
use crate::service::{Context, ServiceError};
use crate::store::RankIndex;
use leaderboard_rules::ids::LeaderboardId;

/// How a match result goes to its boards: at `ts`, reached (for ties) at `now` on each,
/// and whether each board's write reads the player's rank before it (`previous_rank`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fanout {
    pub ts: i64,
    pub now: i64,
    pub previous_rank: bool,
}

impl Fanout {
    /// A match's fan-out starting now, at its `event_ts` (checked; none is now).
    pub(crate) fn starting<S, I>(
        ctx: &Context<S, I>,
        event_ts: Option<i64>,
        previous_rank: bool,
    ) -> Result<Self, ServiceError> {
        let now = ctx.clock.now();
        check_event_ts(ctx, event_ts, now)?;
        Ok(Self {
            ts: event_ts.unwrap_or(now),
            now,
            previous_rank,
        })
    }
}

/// A match result recorded on its family's boards (their places still to find) and its
/// tournaments.
pub(crate) struct Recorded {
    /// The reply but for its family boards' outcomes, which [`place_recorded`] fills in.
    pub(super) reply: MatchReply,
    pub(super) boards: Vec<Written>,
}

/// One board of a recorded match: its outcome, or the window and board whose place
/// [`write::place_all`] brings.
type Shape = Result<BoardOutcome, (OnWindow, LeaderboardId)>;

/// Stage 4 of recorded match results: every family board written now placed at once
/// ([`write::place_all`]: one index round trip per slot), the replies in order.
pub(crate) async fn place_recorded<S, I: RankIndex>(
    ctx: &Context<S, I>,
    recorded: Vec<Recorded>,
) -> Vec<MatchReply> {
    let mut all = Vec::new();
    let shapes: Vec<(MatchReply, Vec<Shape>)> = (recorded.into_iter())
        .map(|Recorded { reply, boards }| {
            let shape = (boards.into_iter())
                .map(|board| match board {
                    Written::Done(outcome) => Ok(outcome),
                    Written::Unplaced(on, u) => {
                        let lb = u.board().clone();
                        all.push(*u);
                        Err((on, lb))
                    }
                })
                .collect();
            (reply, shape)
        })
        .collect();
    let mut placed = write::place_all(ctx, all).await.into_iter();
    (shapes.into_iter())
        .map(|(mut reply, shape)| {
            reply.results = (shape.into_iter())
                .map(|board| match board {
                    Ok(outcome) => outcome,
                    Err((on, lb)) => {
                        let reply = placed.next().expect("one placed reply per board written");
                        on.with(Some(lb), accepted(reply))
                    }
                })
                .collect();
            reply
        })
        .collect()
}

/// Counts a match result recorded now. It counts once however many boards it reached;
/// one held on a board and applied on another (a gain rule judges each board's standing)
/// counts as both.
pub(crate) fn tally_match(game: &str, reply: &MatchReply) {
    let (applied, held, improved) = reply.now();
    if applied {
        accepted_in(Some(game));
        crate::service::metrics::tally("ResultsImproved", u64::from(improved));
    }
    if held {
        held_in(Some(game));
    }
}
