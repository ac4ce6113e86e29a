//! One window's seal, wherever its standings are: claimed with a lease, walked into
//! history and results, published once (see the module above for the guarantees).

use std::time::Instant;

use tracing::{info, instrument, warn};

use super::{BoardSeal, EVENT_TOP, LEASE, PAGE, RESULTS_TOP, SealOutcome, Walk, rewards, settle};
use crate::service::ServiceError;
use crate::store::{
    BoardStore, EventPublisher, HistoryRow, Placing, RankedReads, RebuildStore, Results,
    RewardStore, SealState, SealStore, SealedWindow, StoreError, TournamentStore, WindowClosed,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, RankKey};
use leaderboard_rules::time::now_ms;

/// One run's hold on a window's seal (`lb`: the window's id, which its progress and
/// results are kept under).
pub(super) struct Run<'a, S> {
    pub(super) store: &'a S,
    pub(super) lb: &'a LeaderboardId,
    pub(super) state: SealState,
}

impl<S: SealStore> Run<'_, S> {
    /// Saves the progress and renews the lease; false if another run took it over.
    pub(super) async fn save(&mut self) -> Result<bool, StoreError> {
        self.state.lease_until = now_ms() + LEASE.as_millis() as i64;
        self.store.save_seal(self.lb, &self.state).await
    }

    fn report(&self, outcome: SealOutcome) -> BoardSeal {
        BoardSeal {
            leaderboard_id: self.lb.clone(),
            outcome,
            recorded: self.state.recorded,
        }
    }
}

/// Claims `window`'s seal and takes it as far as the deadline allows: `board`'s
/// standings walked in rank order into every participant's history and the window's
/// results, a league cohort settled, `leaderboard.window.closed` published. The
/// progress and the results are kept under the window's id: the board's own for a
/// closed window, a reset's archive's for the standings a reset takes off
/// (`service::reset`). `Sealed` or `AlreadySealed` once the event is out.
#[instrument(skip_all, fields(board = %board.leaderboard_id, window = %window.leaderboard_id))]
#[expect(
    clippy::too_many_lines,
    reason = "a window's seal in its order: claim, read, write results and history, publish, settle"
)]
pub(crate) async fn record<
    S: BoardStore + RankedReads + RebuildStore + SealStore + TournamentStore + RewardStore,
    E: EventPublisher,
>(
    store: &S,
    events: &E,
    board: &Board,
    window: SealedWindow,
    deadline: Instant,
) -> Result<BoardSeal, ServiceError> {
    let walked = &board.leaderboard_id;
    let lb = &window.leaderboard_id.clone();
    let now = now_ms();
    let owner = crate::service::run_id();
    let claimed = store
        .claim_seal(lb, &owner, now, now + LEASE.as_millis() as i64)
        .await?;
    let Some(state) = claimed else {
        return finished_elsewhere(store, lb).await;
    };
    let mut run = Run { store, lb, state };
    if !run.state.walked {
        let dir = board.policy.direction();
        let after = run
            .state
            .after
            .as_deref()
            .and_then(|k| RankKey::from_sort_key(dir, k));
        let mut walk = Walk::new(store, walked, dir, board.rank_index, after);
        loop {
            let page = walk.next(PAGE).await?;
            let rows: Vec<HistoryRow> = page
                .iter()
                .zip(run.state.recorded + 1..)
                .filter_map(|(key, rank)| {
                    Some(HistoryRow {
                        player_id: leaderboard_rules::ids::PlayerId::parse(&key.player).ok()?,
                        window: window.clone(),
                        rank,
                        score: key.score.get(),
                        ties: key.ties.clone(),
                        reached_at: key.reached_at,
                        league: None,
                    })
                })
                .collect();
            store.put_history(&rows).await?;
            run.state.recorded += page.len() as u64;
            run.state.after = page.last().map(|k| k.sort_key(dir));
            let end = page.len() < PAGE;
            if end {
                let top = match board.rank_index {
                    true => {
                        store
                            .ranked_after(BoardOrder::new(walked, dir), None, RESULTS_TOP)
                            .await?
                    }
                    false => {
                        let mut walk = Walk::new(store, walked, dir, false, None);
                        walk.next(RESULTS_TOP as usize).await?
                    }
                };
                let results = Results {
                    window: window.clone(),
                    sealed_at: now_ms(),
                    total: run.state.recorded,
                    top: placings(&top),
                    league: None,
                    reward_table: None,
                };
                store.put_results(&results).await?;
                run.state.walked = true;
                // The last key names a player; nothing needs it any more.
                run.state.after = None;
            }
            if !end && Instant::now() >= deadline {
                // Out of time: the place is saved and the lease let go, so the next run
                // goes on at once.
                run.state.lease_until = 0;
                let kept = run.store.save_seal(lb, &run.state).await?;
                let outcome = if kept {
                    SealOutcome::InProgress
                } else {
                    SealOutcome::Busy
                };
                return Ok(run.report(outcome));
            }
            if !run.save().await? {
                return Ok(run.report(SealOutcome::Busy));
            }
            if end {
                break;
            }
        }
    }
    // A league's cohort settles its members, and a window with a reward table decides
    // its rewards, before its window-closed event.
    if !settle::settle(&mut run, events, board, &window).await? {
        return Ok(run.report(SealOutcome::Busy));
    }
    if !rewards::reward(&mut run, events, board, &window).await? {
        return Ok(run.report(SealOutcome::Busy));
    }
    let results = store
        .get_results(lb)
        .await?
        .ok_or_else(|| ServiceError::NotSealed(lb.clone()))?;
    // Renewed just before publishing: a run that lost its lease stops here.
    if !run.save().await? {
        return Ok(run.report(SealOutcome::Busy));
    }
    events
        .window_closed(&WindowClosed {
            seal_id: lb.to_string(),
            window,
            sealed_at: results.sealed_at,
            total: results.total,
            // A tournament's cohort names every member's final rank (at most 1,000).
            top: (results.top.iter())
                .take(if board.is_cohort() {
                    usize::MAX
                } else {
                    EVENT_TOP
                })
                .cloned()
                .collect(),
        })
        .await?;
    run.state.published = true;
    if !run.save().await? {
        warn!("lost the seal's lease right after publishing");
    }
    info!(
        total = results.total,
        ms = now_ms() - run.state.started_at,
        "window sealed"
    );
    Ok(run.report(SealOutcome::Sealed))
}

/// The claim failed: the seal is done or held by another run.
async fn finished_elsewhere<S: SealStore>(
    store: &S,
    lb: &LeaderboardId,
) -> Result<BoardSeal, ServiceError> {
    let state = store.get_seal(lb).await?;
    let recorded = state.as_ref().map_or(0, |s| s.recorded);
    let outcome = match state {
        Some(s) if s.published => SealOutcome::AlreadySealed,
        _ => SealOutcome::Busy,
    };
    Ok(BoardSeal {
        leaderboard_id: lb.clone(),
        outcome,
        recorded,
    })
}

/// Ranked keys as places 1, 2, ...
fn placings(keys: &[RankKey]) -> Vec<Placing> {
    keys.iter()
        .zip(1..)
        .map(|(k, rank)| Placing {
            rank,
            player_id: leaderboard_rules::ids::PlayerId::parse(&k.player).ok(),
            score: k.score.get(),
            ties: k.ties.clone(),
            reached_at: k.reached_at,
        })
        .collect()
}
