//! `GET /tournaments/{t}/players/{p}/cohort`: the player's cohort in the current (or a
//! one-off's only) occurrence: its rows in rank order with names, the player's rank in
//! it, its members who have no result yet, and the time left.

use serde::Serialize;
use tracing::instrument;

use super::{member_of, occurrence_for_reads};
use crate::service::reads::{TopReply, top};
use crate::service::{Context, ServiceError};
use crate::store::{RankIndex, ReadStore, TournamentStore};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankMode;
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::tournament::Seating;

/// Reply of a cohort read: the cohort board's rows (a top read of the whole cohort, with
/// its `leaderboard_id`, `total`, `entries`, provenance) and the cohort around them.
#[derive(Debug, Clone, Serialize)]
pub struct CohortReply {
    pub tournament_id: String,
    pub occurrence: String,
    pub cohort: u64,
    /// The cohort's most players.
    pub size: u32,
    /// Players seated in it so far.
    pub members: u64,
    /// The player's place in the cohort (null before their first result).
    pub rank: Option<u64>,
    /// Members without a result yet, in seat order.
    pub waiting: Vec<PlayerId>,
    pub ends_at: String,
    /// Late results are taken until then (the end plus the grace).
    pub closes_at: String,
    /// Seconds until the end (0 once ended).
    pub seconds_left: i64,
    #[serde(flatten)]
    pub rows: TopReply,
}

/// The player's cohort; see the module docs.
#[instrument(skip(ctx))]
pub async fn cohort<S: ReadStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    tournament: &str,
    player: &PlayerId,
) -> Result<CohortReply, ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, tournament).await?;
    let Some(seating) = t.seating() else {
        return Err(ServiceError::NoCohorts(t.tournament_id));
    };
    let now = now_ms();
    let (occ, _) = occurrence_for_reads(&t, now);
    let lb = t.board_id(&occ);
    let Some(c) = member_of(ctx, &lb, player).await?.and_then(|m| m.cohort) else {
        return Err(ServiceError::NotJoined {
            tournament: t.tournament_id,
            player: player.clone(),
        });
    };
    let cohort_lb = t.cohort_board_id(&occ, c);
    let (mut rows, seated) = futures::try_join!(
        top(ctx, &cohort_lb, u64::from(seating.size), RankMode::Unique),
        members(ctx, &lb, &cohort_lb, seating, c),
    )?;
    let mut rank = None;
    for e in &mut rows.entries {
        e.is_self = e.player_id == player.as_str();
        if e.is_self {
            rank = Some(e.rank);
        }
    }
    let waiting = (seated.iter().flatten())
        .filter(|p| !rows.entries.iter().any(|e| e.player_id == p.as_str()))
        .cloned()
        .collect();
    let closes_at = occ.end + i64::from(t.grace_seconds) * 1000;
    Ok(CohortReply {
        tournament_id: t.tournament_id.clone(),
        occurrence: occ.key.clone(),
        cohort: c,
        size: seating.size,
        members: seated.iter().flatten().count() as u64,
        rank,
        waiting,
        ends_at: rfc3339_ms(occ.end),
        closes_at: rfc3339_ms(closes_at),
        seconds_left: ((occ.end - now) / 1000).max(0),
        rows,
    })
}

/// Who sits in the cohort, seat by seat, from the container's cache (a few seconds) or
/// the seat items.
async fn members<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    occ: &LeaderboardId,
    cohort_lb: &LeaderboardId,
    seating: Seating,
    c: u64,
) -> Result<Vec<Option<PlayerId>>, ServiceError> {
    if let Some(held) = ctx.tournaments.members.get(cohort_lb) {
        return Ok(held);
    }
    let held = ctx.store.seat_holders(occ, &seating.seats_of(c)).await?;
    ctx.tournaments.members.put(cohort_lb.clone(), held.clone());
    Ok(held)
}
