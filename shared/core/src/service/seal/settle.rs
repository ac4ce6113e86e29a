//! A league cohort's settlement, a step of its seal (docs/leagues.md, "The seal"): once
//! the cohort is walked and its results stored, the outcome is decided
//! (`tournaments::decide`) and stored with the results, so every later run applies
//! the same one; it is applied to each member's standing (each occurrence once) and
//! written into the ranked members' history rows; then `league.settled` is published,
//! with the lease just renewed, and recorded. A crash anywhere in between leaves the
//! step for the next run, which does only what is left.

use futures::{StreamExt, TryStreamExt};

use super::record::Run;
use crate::service::ServiceError;
use crate::service::tournaments::{decide, member_view};
use crate::store::{
    EventPublisher, HistoryRow, LeagueRow, LeagueSettled, Results, SealStore, SealedWindow,
    TournamentStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::tournament::{Occurrence, tier_of_cohort};

/// Standings written at once.
const WRITES: usize = 16;

/// Settles `board` if it is a league's cohort; false if the run lost its lease.
pub(super) async fn settle<S: SealStore + TournamentStore, E: EventPublisher>(
    run: &mut Run<'_, S>,
    events: &E,
    board: &Board,
    window: &SealedWindow,
) -> Result<bool, ServiceError> {
    if run.state.settled && run.state.league_published {
        return Ok(true);
    }
    let store = run.store;
    let Some(id) = board.tournament.as_deref().filter(|_| board.is_cohort()) else {
        return Ok(true);
    };
    let Some(t) = store.get_tournament(id).await? else {
        return Ok(true);
    };
    let Some(league) = &t.league else {
        return Ok(true);
    };
    let cohort = (window.scope.rsplit_once(":c"))
        .and_then(|(_, n)| n.parse::<u64>().ok())
        .ok_or_else(|| ServiceError::NotSealed(window.leaderboard_id.clone()))?;
    let occ = (board.window.as_ref())
        .and_then(|w| Occurrence::of(&w.window))
        .ok_or_else(|| ServiceError::NotSealed(window.leaderboard_id.clone()))?;
    let mut results = (store.get_results(&window.leaderboard_id).await?)
        .ok_or_else(|| ServiceError::NotSealed(window.leaderboard_id.clone()))?;
    let decided = match &results.league {
        Some(decided) => decided.clone(),
        None => {
            let decided = decide(store, &t, league, &occ, cohort, &results.top).await?;
            results.league = Some(decided.clone());
            store.put_results(&results).await?;
            decided
        }
    };
    if !run.state.settled {
        let changes = (decided.iter())
            .filter_map(|s| {
                let change = s.change(league, &occ.key, cohort, results.sealed_at);
                Some((s.player_id.clone()?, change))
            })
            .collect::<Vec<_>>();
        futures::stream::iter(
            changes.iter().map(|(player, change)| {
                store.settle_league_member(&t.tournament_id, player, change)
            }),
        )
        .buffer_unordered(WRITES)
        .try_collect::<Vec<_>>()
        .await?;
        store
            .put_history(&history(&results, window, league))
            .await?;
        run.state.settled = true;
        if !run.save().await? {
            return Ok(false);
        }
    }
    if !run.state.league_published {
        // Renewed just before publishing: a run that lost its lease stops here.
        if !run.save().await? {
            return Ok(false);
        }
        events
            .league_settled(&LeagueSettled {
                settle_id: window.leaderboard_id.to_string(),
                tournament_id: t.tournament_id.clone(),
                occurrence: occ.key.clone(),
                cohort,
                tier: league.tier_id(tier_of_cohort(cohort)).to_owned(),
                leaderboard_id: window.leaderboard_id.clone(),
                sealed_at: results.sealed_at,
                members: decided.iter().map(|s| member_view(league, s)).collect(),
            })
            .await?;
        run.state.league_published = true;
        if !run.save().await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The ranked members' history rows of the cohort, with their league outcome: the
/// outcome's first entries are the top's places, in order (`tournaments::decide`).
fn history(
    results: &Results,
    window: &SealedWindow,
    league: &leaderboard_rules::league::League,
) -> Vec<HistoryRow> {
    let decided = results.league.as_deref().unwrap_or_default();
    (results.top.iter().zip(decided))
        .filter_map(|(p, s)| {
            let view = member_view(league, s);
            Some(HistoryRow {
                player_id: p.player_id.clone()?,
                window: window.clone(),
                rank: p.rank,
                score: p.score,
                ties: p.ties.clone(),
                reached_at: p.reached_at,
                league: Some(LeagueRow {
                    tier_before: view.tier_before,
                    tier_after: view.tier_after,
                    reward: view.reward,
                }),
            })
        })
        .collect()
}
