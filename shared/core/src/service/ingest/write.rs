//! The write: the result folded into the row and written on its revision, read and
//! folded again when the row moved; a tournament result's attempt counted in the same
//! transaction from the count read.

use tracing::warn;

use super::check_ban;
use super::placement::{Placed, place, place_before, replayed};
use super::receipt::{IngestReply, correction_audit, outcome};
use super::request::{Op, SubmitScore};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::integrity;
use crate::store::{
    AttemptCount, Buckets, Commit, CommitOutcome, Consistency, KeptReceipt, ModerationStore,
    RankIndex, Row, RowAt, StandingStore, TournamentStore,
};
use leaderboard_rules::board::{Board, Fold, correct};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::rolling::{Bucket, refold};
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;
use leaderboard_rules::time::now_ms;

/// Optimistic attempts before giving up with [`ServiceError::Contention`].
pub(crate) const MAX_ATTEMPTS: u32 = 64;

/// Folds the submission into `row` and writes it, conditional on the row's revision; a
/// row that moved meanwhile is read again (and the ban with it) and folded again. A
/// tournament result's attempt (`counted`) is counted in the same write, or the write
/// refused.
#[expect(
    clippy::too_many_lines,
    reason = "one attempt loop of the write path: prepare, fold, judge, commit; the stages are to be split out of it"
)]
pub(crate) async fn write<S: StandingStore + ModerationStore + TournamentStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
    mut row: Row,
    mut counted: Option<AttemptCount<'_>>,
) -> Result<IngestReply, ServiceError> {
    let dir = board.policy.direction();
    let result = req.on(board)?;
    let (score, ties) = &result;
    let rules = integrity::rules_for(board, &req).filter(|_| counted.is_none());
    // The board's top (for its top rule) is read beside the player's place.
    let (mut before, top) = tokio::join!(
        place_before(ctx, &req, dir),
        integrity::top_of(ctx, board, rules)
    );
    let ttl_s = ctx.settings.receipt_ttl.as_secs() as i64;
    let previous_rank = match &before {
        Some(Ok(Placed::At(rank, _))) => Some(*rank),
        _ => None,
    };
    let index_expire_at = ctx.settings.index_expire_at(board);
    for attempt in 0..MAX_ATTEMPTS {
        let current = row.standing.as_ref();
        let now = now_ms();
        let at = req.reached_at.unwrap_or(now);
        let as_of = ctx.clock.now();
        let (folded, buckets) = match fold_result(board, &req, &row, (*score, ties), at, as_of) {
            Ok((fold, buckets)) => (Ok(fold), buckets),
            Err(e) => (Err(e), None),
        };
        let fold = match folded {
            // A player whose standing was removed starts over after the removal.
            Ok(fold) if current.is_none() => fold
                .after_removal(row.version)
                .carrying(req.metadata.clone()),
            Ok(fold) => fold.carrying(req.metadata.clone()),
            // A retry of an accepted match must replay, even if folding it again would
            // now be refused (a SUM total near the limit); the row may have been stale.
            Err(e) => {
                let fresh = (ctx.store)
                    .get_row(&req.board, &req.player, Consistency::Strong)
                    .await?;
                return replayed(ctx, board, &req, &result, &fresh)
                    .await?
                    .ok_or_else(|| e.into());
            }
        };
        let tripped = rules.and_then(|r| {
            integrity::judge(
                r,
                board,
                &req,
                &row,
                *score,
                &fold,
                top,
                (now / 1000, ttl_s),
            )
        });
        let outcome = if let Some(tripped) = tripped {
            let holding = integrity::Holding {
                result: &result,
                tripped,
                previous_rank,
                index_expire_at,
                at,
            };
            match integrity::hold(ctx, board, &req, &row, holding).await? {
                Some(mut reply) => {
                    let known = before.take();
                    place(ctx, &req, dir, None, None, known, &mut reply).await;
                    return Ok(reply);
                }
                // The row moved since it was read: read again below, as for a result.
                None => CommitOutcome::StandingChanged,
            }
        } else {
            let (standing, mut receipt) = outcome(&req, &result, current, &fold);
            receipt.previous_rank = previous_rank;
            receipt.attempt = counted.map(|a| a.after());
            let audit = correction_audit(&req, board, &receipt);
            let commit = Commit {
                at: RowAt {
                    board: &req.board,
                    player: &req.player,
                    direction: dir,
                    row: &row,
                    index_expire_at,
                },
                standing: Some(standing),
                receipt: KeptReceipt {
                    match_id: req.match_id.clone(),
                    receipt: receipt.clone(),
                    expires_at: now / 1000 + ctx.settings.receipt_ttl.as_secs() as i64,
                },
                ranked: board.rank_index,
                now_s: now / 1000,
                attempt: counted,
                audit: audit.as_ref(),
                buckets: board
                    .rolling()
                    .zip(buckets.as_deref())
                    .map(|(r, b)| Buckets {
                        buckets: b,
                        next_expiry: r.next_expiry(b),
                    }),
                queue: None,
            };
            let committed = ctx.store.commit(&commit).await?;
            if committed == CommitOutcome::Committed {
                let mut reply = IngestReply::new(board, &req, &receipt, false);
                let applied = receipt.update_applied.then_some(standing);
                // Unchanged, the player's place is the one just read before the write.
                let known = before.take().filter(|_| applied.is_none());
                place(ctx, &req, dir, applied, index_expire_at, known, &mut reply).await;
                return Ok(reply);
            }
            committed
        };
        tokio::time::sleep(crate::service::backoff(attempt)).await;
        // A tournament result's count moved: read again before the row, so that a count
        // that includes a copy of this match comes with that copy's receipt.
        let recounted = match outcome {
            CommitOutcome::AttemptRefused => Some(recount(ctx, &req.player, counted).await?),
            _ => None,
        };
        row = (ctx.store)
            .get_row(&req.board, &req.player, Consistency::Strong)
            .await?;
        if let Some(reply) = replayed(ctx, board, &req, &result, &row).await? {
            return Ok(reply);
        }
        if let Some(recounted) = recounted {
            counted = Some(recounted?);
        }
        if let Some(game) = board.game() {
            check_ban(ctx, game, &req.player).await?;
        }
    }
    warn!(attempts = MAX_ATTEMPTS, "gave up under write contention");
    Err(ServiceError::Contention)
}

/// The fold of `result`, reached `at`, into `row`: the board's policy, or an operator's
/// correction; on a rolling board the result joins its time's bucket, the buckets that
/// have left by `as_of` (the context's clock) are dropped, and the standing is what the
/// live ones give (returned with them).
pub(crate) fn fold_result(
    board: &Board,
    req: &SubmitScore,
    row: &Row,
    (score, ties): (Score, &Ties),
    at: i64,
    as_of: i64,
) -> Result<(Fold, Option<Vec<Bucket>>), DomainError> {
    let current = row.standing.as_ref();
    let columns = &board.scores.tiebreaks;
    if let Op::Set(_) = &req.op {
        return Ok((correct(current, (score, ties), &req.match_id, at), None));
    }
    let Some(r) = board.rolling() else {
        let fold = (board.policy).fold(columns, current, (score, ties), &req.match_id, at)?;
        return Ok((fold, None));
    };
    let live = r.live(&row.buckets, as_of);
    let ts = req.event_ts.unwrap_or(as_of);
    let buckets = r.with(board.policy, columns, &live, (score, ties), ts, at)?;
    let fold = refold(board.policy, columns, current, &buckets, &req.match_id, at)?;
    // Adding a result always leaves a bucket.
    Ok((fold.unwrap_or(Fold::Unchanged), Some(buckets)))
}

/// A tournament result's attempt whose count moved: the membership read again, as the
/// next write's count, or why it can count no more (no member, no attempts left; the
/// inner error, which stands only if the match turns out not to have been written by a
/// copy of this request meanwhile).
async fn recount<'a, S: TournamentStore, I>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    attempt: Option<AttemptCount<'a>>,
) -> Result<Result<AttemptCount<'a>, ServiceError>, ServiceError> {
    let Some(a) = attempt else {
        return Err(ServiceError::Contention);
    };
    let member = ctx
        .store
        .get_member(a.occurrence, player, Consistency::Strong)
        .await?;
    Ok(next_count(a, player, member))
}

/// The count the next write of `a` starts from, given the membership as read now.
fn next_count<'a>(
    a: AttemptCount<'a>,
    player: &PlayerId,
    member: Option<leaderboard_rules::tournament::Member>,
) -> Result<AttemptCount<'a>, ServiceError> {
    let tournament = a.tournament.to_owned();
    match (member, a.max) {
        (Some(m), Some(max)) if m.attempts >= max => Err(ServiceError::AttemptsExhausted {
            tournament,
            player: player.clone(),
            max,
        }),
        (Some(m), _) => Ok(AttemptCount {
            seen: m.attempts,
            ..a
        }),
        (None, _) => Err(ServiceError::NotJoined {
            tournament,
            player: player.clone(),
        }),
    }
}
