//! `POST /tournaments/{t}/players/{p}/join`: a seat in the running occurrence, and with
//! it a place in a cohort (docs/tournaments.md, "Joining into cohorts").
//!
//! 1. A player who joined already is answered their placement (nothing written).
//! 2. A banned player is refused.
//! 3. A seat number comes from the seat hints (Redis: a seat given back, else the next
//!    one); without Redis, from a counter item in the table (set past the highest seat
//!    taken when it is first needed): one hot item, in a degraded mode only.
//! 4. One transaction puts the seat item and the membership, each only if absent. A
//!    seat found held moves the hint past the highest seat taken; a player found joined
//!    (a concurrent join of theirs won) gives the seat back and answers that join's
//!    placement. Seats at or past `max_players` refuse the join: the occurrence is full.
//!
//! In a league (docs/leagues.md) the player joins their tier: the one their standing
//! says, else the start tier. Each tier has its own seat numbers (`tier_seats`) and
//! its own hints and counter (`Tournament::seat_pool`), so its cohorts hold only its
//! players; `max_players` then caps each tier. A player whose previous occurrence is
//! not settled yet is refused (`league_settling`) rather than seated in a stale tier.

use serde::Serialize;
use tracing::{instrument, warn};

use super::member_of;
use crate::service::scores::ensure_board;
use crate::service::{Context, JoinRefusal, ServiceError, backoff};
use crate::store::{BoardStore, ModerationStore, RankIndex, SeatHints, SeatTaken, TournamentStore};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::rfc3339_ms;
use leaderboard_rules::tournament::{Member, NotRunning, Occurrence, Tournament, tier_seats};

/// Seats tried before giving up with [`ServiceError::Contention`].
const MAX_TRIES: u32 = 64;
/// The shortest life of an occurrence's seat hints.
const HINTS_AT_LEAST: std::time::Duration = std::time::Duration::from_secs(3_600);

/// Reply of a join.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct JoinReply {
    pub tournament_id: String,
    pub occurrence: String,
    pub player_id: PlayerId,
    /// The occurrence's board (every result of it).
    pub leaderboard_id: LeaderboardId,
    pub seat: u64,
    /// The player's cohort and its board (absent without cohorts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<u64>,
    /// The league tier the player plays this occurrence in (absent without a league).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort_leaderboard_id: Option<LeaderboardId>,
    pub joined_at: String,
    pub ends_at: String,
    pub attempts_used: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
    /// True when the player had joined before (the same placement again).
    pub already_joined: bool,
}

/// A join's outcome: the membership, whether it was there before, and how many seats
/// were tried and found held or busy (what the bench counts).
#[derive(Debug, Clone)]
pub struct Joined {
    pub member: Member,
    pub already: bool,
    pub retries: u32,
}

impl JoinReply {
    pub(crate) fn new(t: &Tournament, occ: &Occurrence, player: &PlayerId, j: &Joined) -> Self {
        Self {
            tournament_id: t.tournament_id.clone(),
            occurrence: occ.key.clone(),
            player_id: player.clone(),
            leaderboard_id: t.board_id(occ),
            seat: j.member.seat,
            cohort: j.member.cohort,
            tier: t.tier_name(j.member.seat),
            cohort_leaderboard_id: j.member.cohort.map(|c| t.cohort_board_id(occ, c)),
            joined_at: rfc3339_ms(j.member.joined_at),
            ends_at: rfc3339_ms(occ.end),
            attempts_used: j.member.attempts,
            max_attempts: t.max_attempts,
            already_joined: j.already,
        }
    }
}

/// Joins the player to the tournament's running occurrence.
#[instrument(skip(ctx))]
pub async fn join<S: BoardStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    tournament: &str,
    player: &PlayerId,
) -> Result<(JoinReply, Joined), ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, tournament).await?;
    let now = ctx.clock.now();
    let occ = (t.schedule.occurrence_at(now)).map_err(|n| refused(&t, not_running(n)))?;
    let joined = enter(ctx, &t, &occ, player, now).await?;
    Ok((JoinReply::new(&t, &occ, player, &joined), joined))
}

pub(crate) fn not_running(n: NotRunning) -> JoinRefusal {
    match n {
        NotRunning::NotStarted { .. } => JoinRefusal::NotStarted,
        NotRunning::Ended { .. } => JoinRefusal::Ended,
    }
}

pub(crate) fn refused(t: &Tournament, refusal: JoinRefusal) -> ServiceError {
    ServiceError::JoinRefused {
        tournament: t.tournament_id.clone(),
        refusal,
    }
}

/// The player's membership of `occ`: the one they have, or a seat taken now (see the
/// module docs).
pub(crate) async fn enter<S: BoardStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    t: &Tournament,
    occ: &Occurrence,
    player: &PlayerId,
    now: i64,
) -> Result<Joined, ServiceError> {
    let lb = t.board_id(occ);
    if let Some(member) = member_of(ctx, &lb, player).await? {
        return Ok(Joined {
            member,
            already: true,
            retries: 0,
        });
    }
    if ctx.store.get_ban(&t.game, player).await?.is_some() {
        return Err(refused(t, JoinRefusal::Banned));
    }
    let tier = tier_for(ctx, t, occ, player).await?;
    let board = ensure_board(ctx, t.board(occ, None, now)).await?;
    if board.tournament.as_deref() != Some(t.tournament_id.as_str()) {
        return Err(ServiceError::BoardConflict(lb));
    }
    let (pool, seats) = (t.seat_pool(occ, tier), tier_seats(tier));
    // The hints live as long as the occurrence's Redis keys, and an hour at least (a
    // replay of a past occurrence's joins still shares them).
    let expire_at = (ctx.settings.index_expire_at(&board))
        .unwrap_or(i64::MAX / 1000)
        .max(leaderboard_rules::time::now_ms() / 1000 + HINTS_AT_LEAST.as_secs() as i64);
    let pool_of = Pool {
        pool: &pool,
        occ: &lb,
        seats: seats.clone(),
        expire_at,
    };
    let (mut floor, mut pending, mut retries) = (seats.start, None, 0);
    for attempt in 0..MAX_TRIES {
        // A seat to try again, else the hints', else the table counter's.
        let seat = match pending.take() {
            Some(seat) => seat,
            None => next_seat(ctx, &pool_of, floor).await?,
        };
        if t.max_players
            .is_some_and(|max| seat - seats.start >= u64::from(max))
        {
            return Err(refused(t, JoinRefusal::Full));
        }
        let cohort = t.seating().map(|s| s.place(seat).cohort);
        if let Some(c) = cohort {
            ensure_board(ctx, t.board(occ, Some(c), now)).await?;
        }
        ahead(ctx, t, occ, (seats.start, seat), now).await;
        let member = Member {
            seat,
            cohort,
            joined_at: now,
            attempts: 0,
        };
        let taken = match ctx.store.take_seat(&lb, player, &member).await {
            Ok(taken) => taken,
            Err(e) => {
                // Perhaps written after all: a seat given back that is held only costs
                // the next joiner a retry.
                give_back(ctx, &pool, seat, expire_at).await;
                return Err(e.into());
            }
        };
        match taken {
            SeatTaken::Taken => {
                return Ok(Joined {
                    member,
                    already: false,
                    retries,
                });
            }
            SeatTaken::AlreadyJoined { seat_unused } => {
                if seat_unused {
                    give_back(ctx, &pool, seat, expire_at).await;
                }
                let member =
                    (member_of(ctx, &lb, player).await?).ok_or(ServiceError::Contention)?;
                return Ok(Joined {
                    member,
                    already: true,
                    retries,
                });
            }
            // The counter that gave the seat (Redis', or the table's while Redis is
            // away) was lost or is behind the other's: move it past the highest seat.
            SeatTaken::SeatHeld => {
                retries += 1;
                let highest = ctx.store.highest_seat(&lb, seats.clone()).await?;
                floor = highest.map_or(seats.start, |s| s + 1);
            }
            SeatTaken::Busy => {
                retries += 1;
                pending = Some(seat);
                tokio::time::sleep(backoff(attempt)).await;
            }
        }
    }
    warn!(tries = MAX_TRIES, "gave up finding a free seat");
    Err(ServiceError::Contention)
}

/// The tier the player plays `occ` in: 0 without a league; else their standing's, or
/// the start tier. Refused while the occurrence before, which they played, has not
/// settled them.
async fn tier_for<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    t: &Tournament,
    occ: &Occurrence,
    player: &PlayerId,
) -> Result<usize, ServiceError> {
    let Some(league) = &t.league else {
        return Ok(0);
    };
    let standing = (ctx.store)
        .get_league_standing(&t.tournament_id, player)
        .await?;
    if let Some(before) = t.previous(occ)
        && !standing.as_ref().is_some_and(|s| s.has(&before.key))
        && member_of(ctx, &t.board_id(&before), player)
            .await?
            .is_some()
    {
        return Err(refused(t, JoinRefusal::Settling));
    }
    Ok((standing.as_ref())
        .and_then(|s| league.tier_index(&s.tier))
        .unwrap_or_else(|| league.start()))
}

/// Where a join's seat numbers come from: the pool's hints and counter, the
/// occurrence's seat items, the tier's seat numbers.
struct Pool<'a> {
    pool: &'a LeaderboardId,
    occ: &'a LeaderboardId,
    seats: std::ops::Range<u64>,
    expire_at: i64,
}

/// The seat to try: the hints' (never below `floor`), or without them the table
/// counter's.
async fn next_seat<S: TournamentStore, I: SeatHints>(
    ctx: &Context<S, I>,
    p: &Pool<'_>,
    floor: u64,
) -> Result<u64, ServiceError> {
    match ctx.index.next_seat(p.pool, floor, p.expire_at).await {
        Ok(seat) => Ok(seat),
        Err(error) => {
            warn!(%error, "seat hints unavailable; taking a seat from the table's counter");
            if let Some(seat) = ctx.store.bump_seat_counter(p.pool, floor).await? {
                return Ok(seat);
            }
            // No counter yet (or one behind): set it past the highest seat, then take.
            let highest = ctx.store.highest_seat(p.occ, p.seats.clone()).await?;
            let past = highest.map_or(p.seats.start, |s| s + 1).max(floor);
            ctx.store.raise_seat_counter(p.pool, past).await?;
            let seat = ctx.store.bump_seat_counter(p.pool, floor).await?;
            // Raced past again: that join's retry takes it from the highest once more.
            Ok(seat.unwrap_or(past))
        }
    }
}

/// Filling one cohort at a time, the join half way through a cohort creates the next
/// cohort's board, so that the joins that open it find it there instead of all racing
/// to create it (what spreading over 4 cohorts at once used to dilute; the joins
/// benchmark measures both). `(first, seat)`: the tier's first seat and this join's.
/// Not when `max_players` leaves no room for the next cohort; a failure is only logged
/// (the next cohort's first join creates it then).
async fn ahead<S: BoardStore, I: RankIndex>(
    ctx: &Context<S, I>,
    t: &Tournament,
    occ: &Occurrence,
    (first, seat): (u64, u64),
    now: i64,
) {
    let Some(s) = t.seating().filter(|s| s.open == 1) else {
        return;
    };
    let (size, local) = (u64::from(s.size), seat - first);
    let next_first = (local / size + 1) * size;
    let room = t.max_players.is_none_or(|m| next_first < u64::from(m));
    if local % size != size / 2 || !room {
        return;
    }
    let next = s.place(first + next_first).cohort;
    if let Err(error) = ensure_board(ctx, t.board(occ, Some(next), now)).await {
        warn!(%error, cohort = next, "could not create the next cohort's board ahead");
    }
}

/// Gives a seat back to the hints; a failure only leaves the seat empty.
async fn give_back<S, I: SeatHints>(ctx: &Context<S, I>, lb: &LeaderboardId, seat: u64, at: i64) {
    if let Err(error) = ctx.index.give_back(lb, seat, at).await {
        warn!(%error, seat, "could not give a seat back; it stays empty");
    }
}
