//! A window's rewards, a step of its seal (docs/rewards.md, "The seal"): once the
//! window is walked and its results stored, its reward table is found and kept with
//! the results, so every later run decides the same rewards from the same top; each
//! player's reward is stored if it is not already (its id is the window's, so a run
//! again adds nothing); then `leaderboard.rewards.decided` is published, with the lease
//! just renewed, and recorded. A crash anywhere in between leaves the step for the next
//! run, which does only what is left.

use super::record::Run;
use crate::service::ServiceError;
use crate::store::{
    BoardStore, DecidedReward, EventPublisher, Results, Reward, RewardStatus, RewardStore,
    RewardsDecided, SealStore, SealedWindow, TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::is_archive_id;
use leaderboard_rules::reward::RewardTable;
use leaderboard_rules::window::Period;

/// Decides and publishes `window`'s rewards if it has a reward table; false if the run
/// lost its lease.
pub(super) async fn reward<
    S: SealStore + BoardStore + TournamentStore + RewardStore,
    E: EventPublisher,
>(
    run: &mut Run<'_, S>,
    events: &E,
    board: &Board,
    window: &SealedWindow,
) -> Result<bool, ServiceError> {
    if run.state.rewarded && run.state.rewards_published {
        return Ok(true);
    }
    let store = run.store;
    let mut results = (store.get_results(&window.leaderboard_id).await?)
        .ok_or_else(|| ServiceError::NotSealed(window.leaderboard_id.clone()))?;
    let table = match &results.reward_table {
        Some(table) => table.clone(),
        None => match table_of(store, board, window).await? {
            Some(table) => {
                results.reward_table = Some(table.clone());
                store.put_results(&results).await?;
                table
            }
            None => {
                // No table: nothing to decide, now or on a later run.
                run.state.rewarded = true;
                run.state.rewards_published = true;
                return run.save().await.map_err(Into::into);
            }
        },
    };
    let rewards = decide(&results, &table);
    if !run.state.rewarded {
        store.put_rewards(&rewards).await?;
        run.state.rewarded = true;
        if !run.save().await? {
            return Ok(false);
        }
    }
    if !run.state.rewards_published {
        // Renewed just before publishing: a run that lost its lease stops here.
        if !run.save().await? {
            return Ok(false);
        }
        events
            .rewards_decided(&RewardsDecided {
                rewards_id: window.leaderboard_id.to_string(),
                window: window.clone(),
                decided_at: results.sealed_at,
                total: results.total,
                rewards: rewards.iter().map(decided).collect(),
            })
            .await?;
        run.state.rewards_published = true;
        if !run.save().await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The table `window` is paid by: a tournament's board its tournament's (a league's
/// tiers pay through its settle instead), a family's window its family's, a reset's
/// archive of a board without a time window (its resets are its seasons) the board's
/// or its family's. A window's board reset mid-window pays nothing for the archive:
/// the window pays when it ends.
async fn table_of<S: BoardStore + TournamentStore>(
    store: &S,
    board: &Board,
    window: &SealedWindow,
) -> Result<Option<RewardTable>, ServiceError> {
    let archive = is_archive_id(window.leaderboard_id.as_str());
    // A league has no table (`reward::beside_league`): its tiers pay through its settle.
    if let Some(id) = &board.tournament {
        let t = store.get_tournament(id).await?;
        return Ok(t.filter(|_| !archive).and_then(|t| t.rewards));
    }
    let timeless = (board.window.as_ref()).is_none_or(|w| w.window.period == Period::AllTime);
    if archive && !timeless {
        return Ok(None);
    }
    match &board.window {
        Some(w) => {
            let family = store.get_family(&w.game, &w.mode).await?;
            Ok(family.and_then(|f| f.rewards))
        }
        None => Ok(board.rewards.clone()),
    }
}

/// Each named place's reward under `table`: an erased player's place earns none, and
/// the places after it keep theirs.
pub(crate) fn decide(results: &Results, table: &RewardTable) -> Vec<Reward> {
    let top = &results.top;
    let tied: Vec<bool> = (top.iter().enumerate())
        .map(|(i, p)| i > 0 && top[i - 1].score == p.score && top[i - 1].ties == p.ties)
        .collect();
    let expires_at = results.sealed_at + table.expiry_ms();
    (table.decide(&tied, results.total).into_iter())
        .filter_map(|e| {
            let p = &top[e.index];
            Some(Reward {
                reward_id: results.window.leaderboard_id.to_string(),
                player_id: p.player_id.clone()?,
                window: results.window.clone(),
                place: e.place,
                score: p.score,
                reward: e.range.reward.clone(),
                quantity: e.range.quantity,
                decided_at: results.sealed_at,
                expires_at,
                status: RewardStatus::Unclaimed,
                claimed_at: None,
                claimed_by: None,
                claim_published: false,
            })
        })
        .collect()
}

fn decided(r: &Reward) -> DecidedReward {
    DecidedReward {
        player_id: r.player_id.clone(),
        place: r.place,
        reward: r.reward.clone(),
        quantity: r.quantity,
        reward_id: r.reward_id.clone(),
        expires_at: r.expires_at,
    }
}
