//! Leagues (docs/leagues.md): what a sealed cohort decides ([`decide`], used by the
//! seal and by the dry run alike), a player's standing (`GET
//! /tournaments/{t}/players/{p}/league`) and the dry run of a changed definition on a
//! sealed occurrence (`POST /tournaments/{t}/occurrences/{o}/league/dry-run`), which
//! stores nothing.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use crate::service::{Context, ServiceError};
use crate::store::{BoardStore, Placing, SealStore, SettledMember, TournamentStore};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::league::{League, Settled, TierChange};
use leaderboard_rules::tournament::{Occurrence, Tournament, tier_of_cohort, tier_seats};

/// The outcome of one sealed cohort of `occ` under `league`: its ranked members (the
/// sealed top, in rank order, a place erased since unnamed) and the members without a
/// result (the cohort's seat holders who are not ranked, in seat order).
pub async fn decide<S: TournamentStore>(
    store: &S,
    t: &Tournament,
    league: &League,
    occ: &Occurrence,
    cohort: u64,
    top: &[Placing],
) -> Result<Vec<Settled>, ServiceError> {
    let seating = t
        .seating()
        .ok_or_else(|| ServiceError::NoCohorts(t.tournament_id.clone()))?;
    // A place whose player was erased since the seal keeps its rank, unnamed.
    let ranked: Vec<Option<PlayerId>> = top.iter().map(|p| p.player_id.clone()).collect();
    let holders = (store)
        .seat_holders(&t.board_id(occ), &seating.seats_of(cohort))
        .await?;
    let absent: Vec<PlayerId> = (holders.into_iter().flatten())
        .filter(|p| !ranked.iter().flatten().any(|r| r == p))
        .collect();
    Ok(league.settle(tier_of_cohort(cohort), &ranked, &absent))
}

/// One member's outcome as the API and the event show it: tier names, not indexes.
pub fn member_view(league: &League, s: &Settled) -> SettledMember {
    SettledMember {
        player_id: s.player_id.clone(),
        rank: s.rank,
        reward: s.reward.clone(),
        tier_before: league.tier_id(s.tier_before).to_owned(),
        tier_after: league.tier_id(s.tier_after).to_owned(),
    }
}

/// Reply of `GET /tournaments/{t}/players/{p}/league`.
#[derive(Debug, Clone, Serialize)]
pub struct StandingReply {
    pub tournament_id: String,
    pub player_id: PlayerId,
    /// The tier the player plays the next occurrence in.
    pub tier: String,
    /// What each seal decided for them, the newest first.
    pub changes: Vec<TierChange>,
}

/// The player's tier and the changes that led to it (the start tier and none before
/// their first settled occurrence).
#[instrument(skip(ctx))]
pub async fn standing<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    tournament: &str,
    player: &PlayerId,
) -> Result<StandingReply, ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, tournament).await?;
    let league = league_of(&t)?;
    let stored = (ctx.store)
        .get_league_standing(&t.tournament_id, player)
        .await?;
    let (tier, mut changes) = match stored {
        Some(s) => (s.tier, s.changes),
        None => (league.tier_id(league.start()).to_owned(), Vec::new()),
    };
    changes.reverse();
    Ok(StandingReply {
        tournament_id: t.tournament_id.clone(),
        player_id: player.clone(),
        tier,
        changes,
    })
}

/// Body of a dry run: the league definition to try.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DryRunBody {
    pub league: League,
}

/// One cohort of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct DryRunCohort {
    pub cohort: u64,
    pub tier: String,
    pub members: Vec<SettledMember>,
    /// Members whose tier or reward the tried definition decides otherwise than the
    /// seal did.
    pub differs: Vec<PlayerId>,
}

/// Reply of a dry run.
#[derive(Debug, Clone, Serialize)]
pub struct DryRunReply {
    pub tournament_id: String,
    pub occurrence: String,
    pub cohorts: Vec<DryRunCohort>,
}

/// What `body.league` would decide for each sealed cohort of occurrence `key`, beside
/// what the seal decided; nothing is stored. Refused unless the occurrence's cohorts
/// are sealed. The tried league must have as many tiers as the stored one (its cohorts
/// were formed in those tiers).
#[instrument(skip(ctx, body))]
pub async fn dry_run<S: BoardStore + SealStore + TournamentStore, I>(
    ctx: &Context<S, I>,
    tournament: &str,
    key: &str,
    body: DryRunBody,
) -> Result<DryRunReply, ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, tournament).await?;
    let stored = league_of(&t)?;
    let league = body.league.validated()?;
    if league.tiers.len() != stored.tiers.len() {
        return Err(leaderboard_rules::error::DomainError::invalid(
            "league.tiers",
            format!(
                "the occurrence's cohorts were formed in {} tiers; try a league with as many",
                stored.tiers.len()
            ),
        )
        .into());
    }
    let occ = occurrence(ctx, &t, key).await?;
    let lb = t.board_id(&occ);
    let mut cohorts = Vec::new();
    for tier in 0..league.tiers.len() {
        let seats = tier_seats(tier);
        let Some(highest) = ctx.store.highest_seat(&lb, seats.clone()).await? else {
            continue;
        };
        let seating = t.seating().expect("a league has cohorts");
        // Cohorts are dealt `open` at a time: every cohort up to the last block's.
        let first = seating.place(seats.start).cohort;
        let open = u64::from(seating.open);
        let last = seating.place(highest).cohort - first;
        for cohort in first..first + (last / open + 1) * open {
            let cohort_lb = t.cohort_board_id(&occ, cohort);
            let Some(results) = ctx.store.get_results(&cohort_lb).await? else {
                if ctx.store.get_board(&cohort_lb).await?.is_some() {
                    return Err(ServiceError::NotSealed(cohort_lb));
                }
                continue;
            };
            let tried = decide(&ctx.store, &t, &league, &occ, cohort, &results.top).await?;
            let sealed = results.league.unwrap_or_default();
            let differs = (tried.iter())
                .filter(|s| {
                    !sealed.iter().any(|d| {
                        d.player_id == s.player_id
                            && d.tier_after == s.tier_after
                            && d.reward == s.reward
                    })
                })
                .filter_map(|s| s.player_id.clone())
                .collect();
            cohorts.push(DryRunCohort {
                cohort,
                tier: league.tier_id(tier).to_owned(),
                members: tried.iter().map(|s| member_view(&league, s)).collect(),
                differs,
            });
        }
    }
    Ok(DryRunReply {
        tournament_id: t.tournament_id.clone(),
        occurrence: occ.key,
        cohorts,
    })
}

fn league_of(t: &Tournament) -> Result<&League, ServiceError> {
    t.league
        .as_ref()
        .ok_or_else(|| ServiceError::NoLeague(t.tournament_id.clone()))
}

/// The occurrence keyed `key`, from its board (which its first join created).
async fn occurrence<S: BoardStore, I>(
    ctx: &Context<S, I>,
    t: &Tournament,
    key: &str,
) -> Result<Occurrence, ServiceError> {
    let lb = leaderboard_rules::ids::LeaderboardId::parse(&format!("t:{}:{key}", t.tournament_id))
        .map_err(|_| {
            leaderboard_rules::error::DomainError::invalid("occurrence", "is not an occurrence key")
        })?;
    (ctx.store.get_board(&lb).await?)
        .and_then(|b| Occurrence::of(&b.window?.window))
        .filter(|occ| occ.key == key)
        .ok_or(ServiceError::BoardNotFound(lb))
}
