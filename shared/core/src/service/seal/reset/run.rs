//! A reset's run (see the module above): its fence waited for, its standings sealed as
//! the archive, each taken off, the reset marked done; and the sweep that runs every
//! reset whose queue turn was lost.

use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use tracing::{info, instrument};

use super::{ResetOutcome, ResetSettings, archive_window, due, hand_on, walk_at};
use crate::service::moderation::tombstone;
use crate::service::seal::{LIST_PAGE, PAGE, SealOutcome, Walk};
use crate::service::{ServiceError, index_expire_at};
use crate::store::{
    BoardResetDone, BoardStore, EventPublisher, JobQueue, RankedReads, RebuildStore, ResetTurn,
    RewardStore, SealStore, StandingStore, TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::order::RankKey;
use leaderboard_rules::page::Paging;
use leaderboard_rules::reset::BoardReset;
use leaderboard_rules::time::now_ms;

/// Standings taken off at once.
const WRITES: usize = 16;

/// Runs every reset whose walk may begin, as far as `deadline` allows: the seal's
/// schedule takes up a reset whose queue turn was lost. Two runs of one reset at once
/// are safe: its seal has a lease, taking a standing off twice finds it gone, and it is
/// marked done once.
pub async fn sweep<S, E, Q>(
    (store, events, queue): (&S, &E, &Q),
    settings: ResetSettings,
    deadline: Instant,
) -> Result<Vec<ResetOutcome>, ServiceError>
where
    S: BoardStore
        + StandingStore
        + RankedReads
        + RebuildStore
        + SealStore
        + TournamentStore
        + RewardStore,
    E: EventPublisher,
    Q: JobQueue,
{
    let mut outcomes = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store
            .list_boards("", Paging::new(after.as_deref(), LIST_PAGE))
            .await?;
        for board in page.boards.iter().filter(|b| due(b, settings, now_ms())) {
            if Instant::now() >= deadline {
                return Ok(outcomes);
            }
            let turn = ResetTurn {
                leaderboard_id: board.leaderboard_id.clone(),
                reset: board.reset.as_ref().map_or(0, |r| r.n),
            };
            outcomes.push(run((store, events, queue), settings, &turn, deadline).await?);
        }
        after = page.next;
        if after.is_none() {
            return Ok(outcomes);
        }
    }
}

/// Takes the reset `turn` names as far as `deadline` allows (see the module docs).
#[instrument(skip_all, fields(board = %turn.leaderboard_id, n = turn.reset))]
pub async fn run<S, E, Q>(
    (store, events, queue): (&S, &E, &Q),
    settings: ResetSettings,
    turn: &ResetTurn,
    deadline: Instant,
) -> Result<ResetOutcome, ServiceError>
where
    S: BoardStore
        + StandingStore
        + RankedReads
        + RebuildStore
        + SealStore
        + TournamentStore
        + RewardStore,
    E: EventPublisher,
    Q: JobQueue,
{
    let lb = &turn.leaderboard_id;
    let board =
        (store.get_board(lb).await?).ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
    let Some(reset) = board
        .reset
        .clone()
        .filter(|r| r.n == turn.reset && r.running())
    else {
        return Ok(ResetOutcome::Passed);
    };
    let wait = walk_at(&reset, settings) - now_ms();
    if wait > 0 {
        let wait = Duration::from_millis(wait as u64);
        if Instant::now() + wait >= deadline {
            hand_on(queue, lb, &reset, settings).await;
            return Ok(ResetOutcome::HandedOn);
        }
        tokio::time::sleep(wait).await;
    }
    let window = archive_window(&board, &reset);
    let sealed = crate::service::seal::record(store, events, &board, window, deadline).await?;
    match sealed.outcome {
        SealOutcome::Sealed | SealOutcome::AlreadySealed => {}
        SealOutcome::Busy => return Ok(ResetOutcome::Passed),
        SealOutcome::InProgress => {
            hand_on(queue, lb, &reset, settings).await;
            return Ok(ResetOutcome::HandedOn);
        }
    }
    if !take_all_off(store, &board, settings, deadline).await? {
        hand_on(queue, lb, &reset, settings).await;
        return Ok(ResetOutcome::HandedOn);
    }
    let done = BoardReset {
        done_at: Some(now_ms()),
        ..reset
    };
    // Published before it is marked done: a run stopped in between publishes again (the
    // event's id, the archive's, lets a consumer drop the second).
    events
        .board_reset(&BoardResetDone {
            reset_id: done.archive_of(lb).to_string(),
            leaderboard_id: lb.clone(),
            reset: done.n,
            archive_id: done.archive_of(lb),
            archived: sealed.recorded,
            detail: done.clone(),
        })
        .await?;
    if !store.set_reset(lb, &done).await? {
        return Ok(ResetOutcome::Passed);
    }
    info!(archived = sealed.recorded, "board reset");
    Ok(ResetOutcome::Done)
}

/// Takes every standing off `board`, a page at a time from the top; false if the
/// deadline came first. No result moves a row meanwhile (the fence holds them), so each
/// row is met once; a later run starts again from what is left.
async fn take_all_off<S: StandingStore + RankedReads + RebuildStore>(
    store: &S,
    board: &Board,
    settings: ResetSettings,
    deadline: Instant,
) -> Result<bool, ServiceError> {
    let lb = &board.leaderboard_id;
    let dir = board.policy.direction();
    let expire_at = index_expire_at(board, settings.redis_retention);
    let mut walk = Walk::new(store, lb, dir, board.rank_index, None);
    loop {
        let page = walk.next(PAGE).await?;
        futures::stream::iter(page.iter())
            .map(|key| take_off(store, board, key, expire_at))
            .buffer_unordered(WRITES)
            .try_collect::<()>()
            .await?;
        if page.len() < PAGE {
            return Ok(true);
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
    }
}

/// Replaces one player's row with its tombstone, keeping its receipts (as an operator's
/// removal does); a row with no standing left is passed by.
async fn take_off<S: StandingStore>(
    store: &S,
    board: &Board,
    key: &RankKey,
    index_expire_at: Option<i64>,
) -> Result<(), ServiceError> {
    let Ok(player) = PlayerId::parse(&key.player) else {
        return Ok(());
    };
    tombstone(store, board, &player, index_expire_at, false).await?;
    Ok(())
}
