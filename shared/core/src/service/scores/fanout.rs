//! A match result's fan-out: when it goes to its boards ([`Fanout`]), what it recorded
//! before its places are found ([`Recorded`]), and those places found for many results at
//! once.

use super::outcome::accepted;
use super::{BoardOutcome, MatchReply};
use crate::service::ingest::{accepted_in, held_in};
use crate::service::write::{self, check_event_ts};
use crate::service::{Context, ServiceError};
use crate::store::RankIndex;

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
    pub(super) reply: MatchReply,
    /// The family boards written now, by their index in `reply.results`.
    pub(super) unplaced: Vec<(usize, write::Unplaced)>,
}

/// Stage 4 of recorded match results: every family board written now placed at once
/// ([`write::place_all`]: one index round trip per slot), the replies in order.
pub(crate) async fn place_recorded<S, I: RankIndex>(
    ctx: &Context<S, I>,
    recorded: Vec<Recorded>,
) -> Vec<MatchReply> {
    let mut replies = Vec::with_capacity(recorded.len());
    let mut at = Vec::new();
    let mut all = Vec::new();
    for (r, Recorded { reply, unplaced }) in recorded.into_iter().enumerate() {
        replies.push(reply);
        for (i, u) in unplaced {
            at.push((r, i));
            all.push(u);
        }
    }
    for ((r, i), placed) in at.into_iter().zip(write::place_all(ctx, all).await) {
        let BoardOutcome { outcome, .. } = &mut replies[r].results[i];
        *outcome = accepted(placed);
    }
    replies
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
