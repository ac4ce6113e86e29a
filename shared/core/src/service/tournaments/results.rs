//! `POST /tournaments/{t}/players/{p}/score`: a result of the occurrence its `event_ts`
//! (or now) falls in, counted against the player's attempts (docs/tournaments.md,
//! "Attempts").
//!
//! 1. The player's membership is read (a tournament that does not require joining
//!    joins them now, while the occurrence runs; one that does answers `not_joined`).
//! 2. The occurrence's board is written first, with the same idempotent protocol as any
//!    board: a retried match replays its receipt, counting nothing. A new match is
//!    counted on the membership in the same transaction as the row (attempts left, or
//!    409 `attempts_exhausted` with nothing written).
//! 3. Then the player's cohort board, keyed by the same match: a retry after a crash
//!    between the two writes finds the first replayed and completes the second.

use serde::Serialize;
use tracing::instrument;

use super::join::{enter, not_running, refused};
use super::member_of;
use crate::service::operator::Operator;
use crate::service::scores::{MatchResult, Refusal, submission};
use crate::service::write::reply::IngestReply;
use crate::service::write::request::{ScoreBody, SubmitScore};
use crate::service::write::{self, Prepared, check_ban, check_event_ts};
use crate::service::{Context, JoinRefusal, ServiceError};
use crate::store::{AttemptCount, Consistency, IngestStore, RankIndex};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::tournament::Tournament;

/// The result on the player's cohort board.
#[derive(Debug, Clone, Serialize)]
pub struct CohortResult {
    pub cohort: u64,
    #[serde(flatten)]
    pub result: IngestReply,
}

/// Reply of a tournament result.
#[derive(Debug, Clone, Serialize)]
pub struct TournamentScoreReply {
    pub tournament_id: String,
    pub occurrence: String,
    /// The result on the occurrence's board (`leaderboard_id`, score, rank, `replayed`).
    #[serde(flatten)]
    pub result: IngestReply,
    /// The result on the player's cohort's board (absent without cohorts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<CohortResult>,
    /// Results counted in this occurrence, this one included.
    pub attempts_used: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_attempts: Option<u32>,
}

/// What one tournament made of a match result posted to `POST /scores` (or read from
/// a stream): the result as a tournament result, or why the tournament refused it.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum TournamentOutcome {
    Accepted(Box<TournamentScoreReply>),
    Refused {
        tournament_id: String,
        refused: Refusal,
    },
}

/// A match result for every tournament of its game and mode whose occurrence its time
/// falls in and which the player joined (or which needs no joining). A tournament that
/// refuses it (attempts used up, full, a ban) says so in its outcome; one the player is
/// not in is left out. The first value says whether the game and mode have tournaments
/// at all. Backend failures fail the whole request, which is safe to retry.
pub async fn for_match<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    m: &MatchResult,
    ts: i64,
    now: i64,
) -> Result<(bool, Vec<TournamentOutcome>), ServiceError> {
    let all = ctx.tournaments.all(&ctx.store).await?;
    let mine: Vec<&Tournament> = (all.iter())
        .filter(|t| t.game == m.game && t.mode == m.mode)
        .collect();
    let mut outcomes = Vec::new();
    for t in &mine {
        let req = submission(m, placeholder(), ts, now);
        match record(ctx, t, req, now).await {
            Ok(reply) => outcomes.push(TournamentOutcome::Accepted(Box::new(reply))),
            // Not in this event, or no occurrence at the match's time: not its result.
            Err(ServiceError::NotJoined { .. })
            | Err(ServiceError::JoinRefused {
                refusal: JoinRefusal::NotStarted | JoinRefusal::Ended,
                ..
            }) => {}
            Err(e) if !e.is_transient() => outcomes.push(TournamentOutcome::Refused {
                tournament_id: t.tournament_id.clone(),
                refused: Refusal {
                    code: e.code(),
                    message: e.to_string(),
                },
            }),
            Err(e) => return Err(e),
        }
    }
    Ok((!mine.is_empty(), outcomes))
}

/// Records one tournament result; see the module docs.
#[instrument(skip(ctx, body))]
pub async fn submit<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    tournament: &str,
    player: &PlayerId,
    body: ScoreBody,
    actor: &Operator,
) -> Result<TournamentScoreReply, ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, tournament).await?;
    let now = ctx.clock.now();
    let req = SubmitScore::new(placeholder(), player.clone(), body, actor)?;
    if req.op.is_set() {
        let why = "set corrects a board's standing, not a tournament's result (its attempts)";
        return Err(leaderboard_rules::error::DomainError::invalid("op", why).into());
    }
    check_event_ts(ctx, req.event_ts, now)?;
    record(ctx, &t, req, now).await
}

/// The board id a submission carries until its occurrence is known.
fn placeholder() -> LeaderboardId {
    LeaderboardId::parse("t:placeholder").expect("a valid board id")
}

/// Records one checked result of `t` (its board filled in here); see the module docs.
async fn record<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    t: &Tournament,
    mut req: SubmitScore,
    now: i64,
) -> Result<TournamentScoreReply, ServiceError> {
    let player = &req.player.clone();
    let occ = (t.schedule.occurrence_at(req.event_ts.unwrap_or(now)))
        .map_err(|n| refused(t, not_running(n)))?;
    let lb = t.board_id(&occ);
    let member = match member_of(ctx, &lb, player).await? {
        Some(m) => m,
        None if t.join_required => return Err(not_joined(t, player)),
        None if now >= occ.end => return Err(not_joined(t, player)),
        None => enter(ctx, t, &occ, player, now).await?.member,
    };
    req.board = lb.clone();
    // Both boards tie-break this result alike.
    req.reached_at = Some(now);
    let board = ctx.boards.current(&ctx.store, &lb).await?;
    let result = match write::prepare(ctx, &board, &req, Consistency::Strong).await? {
        Prepared::Replay(reply) => reply,
        Prepared::Write(row) => {
            if let Some(max) = t.max_attempts.filter(|max| member.attempts >= *max) {
                return Err(exhausted(t, player, max));
            }
            check_ban(ctx, &t.game, player).await?;
            let attempt = AttemptCount {
                tournament: &t.tournament_id,
                occurrence: &lb,
                max: t.max_attempts,
                seen: member.attempts,
            };
            write::write(ctx, &board, req.clone(), row, Some(attempt)).await?
        }
    };
    let attempts_used = result.attempts_used;
    let cohort = match member.cohort {
        Some(c) => Some(CohortResult {
            cohort: c,
            result: on_cohort(ctx, &t.cohort_board_id(&occ, c), req).await?,
        }),
        None => None,
    };
    Ok(TournamentScoreReply {
        tournament_id: t.tournament_id.clone(),
        occurrence: occ.key,
        result,
        cohort,
        // As the write that counted this match left it (a retry: as its receipt says);
        // a receipt from before receipts kept it answers the count read.
        attempts_used: attempts_used.unwrap_or(member.attempts.max(1)),
        max_attempts: t.max_attempts,
    })
}

/// The result on the cohort's board: replayed if it is there, written if not.
async fn on_cohort<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    cohort_lb: &LeaderboardId,
    mut req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    req.board = cohort_lb.clone();
    let board = ctx.boards.current(&ctx.store, cohort_lb).await?;
    match write::prepare(ctx, &board, &req, Consistency::Strong).await? {
        Prepared::Replay(reply) => Ok(reply),
        Prepared::Write(row) => write::write(ctx, &board, req, row, None).await,
    }
}

fn not_joined(t: &Tournament, player: &PlayerId) -> ServiceError {
    ServiceError::NotJoined {
        tournament: t.tournament_id.clone(),
        player: player.clone(),
    }
}

fn exhausted(t: &Tournament, player: &PlayerId, max: u32) -> ServiceError {
    ServiceError::AttemptsExhausted {
        tournament: t.tournament_id.clone(),
        player: player.clone(),
        max,
    }
}
