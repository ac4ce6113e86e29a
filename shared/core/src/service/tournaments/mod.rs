//! Tournaments (docs/tournaments.md): definitions (`POST /tournaments`, server-only and
//! audited; `GET /tournaments`, `GET /tournaments/{t}`), joins into cohorts (`join`),
//! results that count attempts (`results`), a player's cohort (`cohort`) and the
//! `tournament.started` event (`started`).

mod cohort;
mod join;
mod league;
mod results;
mod started;

use crate::store::{AuditAction, Consistency, ModerationStore, TournamentStore};
pub use cohort::{CohortReply, cohort};
pub use join::{JoinReply, Joined, join};
use leaderboard_rules::page::Paging;
pub use league::{
    DryRunBody, DryRunCohort, DryRunReply, StandingReply, decide, dry_run, member_view, standing,
};
pub use results::{CohortResult, TournamentOutcome, TournamentScoreReply, for_match, submit};
pub use started::announce;

use std::time::Duration;

use futures::future::try_join_all;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::Context;
use super::boards::Created;
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, ReasonBody, record};
use crate::service::ttl_cache::TtlCache;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::tournament::{
    CohortSeating, NotRunning, Occurrence, Tournament, tier_seats,
};

/// How long a container keeps a cohort's member list (a new member shows within this).
pub const COHORT_MEMBERS_TTL: Duration = Duration::from_secs(5);
/// The most tournaments one page of the list holds.
const MAX_PAGE: u32 = 100;

/// A container's cached tournament definitions (trusted as long as board definitions)
/// and cohorts' member lists (for [`COHORT_MEMBERS_TTL`]).
pub struct TournamentCache {
    definitions: TtlCache<String, Tournament>,
    /// Every definition (what a match result is checked against).
    all: TtlCache<(), Vec<Tournament>>,
    members: TtlCache<LeaderboardId, Vec<Option<PlayerId>>>,
}

impl TournamentCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            definitions: TtlCache::new(ttl),
            all: TtlCache::new(ttl),
            // A context that caches no definitions caches no member lists either.
            members: TtlCache::bounded(
                if ttl.is_zero() {
                    ttl
                } else {
                    COHORT_MEMBERS_TTL
                },
                10_000,
            ),
        }
    }

    /// The tournament, from the cache or the table; 404 if there is none.
    pub async fn get<S: TournamentStore>(
        &self,
        store: &S,
        id: &str,
    ) -> Result<Tournament, ServiceError> {
        leaderboard_rules::tournament::parse_id("t", id)?;
        if let Some(t) = self.definitions.get(&id.to_owned()) {
            return Ok(t);
        }
        let t = (store.get_tournament(id).await?)
            .ok_or_else(|| ServiceError::TournamentNotFound(id.to_owned()))?;
        self.definitions.put(id.to_owned(), t.clone());
        Ok(t)
    }
}

impl TournamentCache {
    /// Every tournament, from the cache or the table (all pages).
    pub async fn all<S: TournamentStore>(
        &self,
        store: &S,
    ) -> Result<Vec<Tournament>, ServiceError> {
        if let Some(all) = self.all.get(&()) {
            return Ok(all);
        }
        let mut all = Vec::new();
        let mut after: Option<String> = None;
        loop {
            let page = store
                .list_tournaments(Paging::new(after.as_deref(), MAX_PAGE))
                .await?;
            all.extend(page.tournaments);
            after = page.next;
            if after.is_none() {
                break;
            }
        }
        self.all.put((), all.clone());
        Ok(all)
    }
}

/// An occurrence as the API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct OccurrenceView {
    pub occurrence: String,
    /// `UPCOMING`, `RUNNING` or `ENDED` (a one-off tournament's before and after).
    pub status: &'static str,
    pub starts_at: String,
    pub ends_at: String,
    /// The occurrence's board: every result, across cohorts.
    pub leaderboard_id: LeaderboardId,
    /// Seats taken (`GET /tournaments/{t}` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub players_joined: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub full: Option<bool>,
}

/// A tournament as the API shows it: its definition and its current (or, one-off, only)
/// occurrence.
#[derive(Debug, Clone, Serialize)]
pub struct TournamentView {
    #[serde(flatten)]
    pub definition: Tournament,
    pub occurrence: OccurrenceView,
}

/// Reply of `GET /tournaments`.
#[derive(Debug, Clone, Serialize)]
pub struct TournamentList {
    pub tournaments: Vec<TournamentView>,
    /// Pass as `after` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
}

/// The occurrence reads are about at `now`: the running one, or a one-off tournament's
/// only one (before it starts and after it ends too).
pub(crate) fn occurrence_for_reads(t: &Tournament, now: i64) -> (Occurrence, &'static str) {
    match t.schedule.occurrence_at(now) {
        Ok(occ) => (occ, "RUNNING"),
        Err(not_running) => {
            let occ = Occurrence {
                key: "once".into(),
                start: t.schedule.start.unwrap_or_default(),
                end: t.schedule.end.unwrap_or_default(),
                period: leaderboard_rules::window::Period::Season,
            };
            match not_running {
                NotRunning::NotStarted { .. } => (occ, "UPCOMING"),
                NotRunning::Ended { .. } => (occ, "ENDED"),
            }
        }
    }
}

fn view(t: Tournament, now: i64) -> TournamentView {
    let (occ, status) = occurrence_for_reads(&t, now);
    TournamentView {
        occurrence: OccurrenceView {
            occurrence: occ.key.clone(),
            status,
            starts_at: rfc3339_ms(occ.start),
            ends_at: rfc3339_ms(occ.end),
            leaderboard_id: t.board_id(&occ),
            players_joined: None,
            full: None,
        },
        definition: t,
    }
}

/// Stores a tournament's definition (checked field by field; nothing stored if one is
/// refused), audited. The same definition again answers the stored one; another
/// definition under the same id is a [`ServiceError::TournamentConflict`].
#[instrument(skip(ctx, body))]
pub async fn create<S: ModerationStore + TournamentStore, I>(
    ctx: &Context<S, I>,
    op: &Operator,
    body: Tournament,
) -> Result<Created<TournamentView>, ServiceError> {
    let mut t = body.validated()?;
    // A new definition fills its cohorts unless it asks to spread them.
    if t.cohort_size.is_some() {
        t.cohort_seating.get_or_insert(CohortSeating::Fill);
    }
    let now = now_ms();
    // Another container sees a new tournament within the cache's TTL; this one at once.
    ctx.tournaments.all.forget(&());
    match ctx.store.create_tournament(&t).await? {
        None => {
            let mut audit = record(
                op,
                AuditAction::CreateTournament,
                &Reason("definition stored".into()),
            );
            audit.game = Some(t.game.clone());
            audit.detail = serde_json::json!({ "tournament_id": t.tournament_id });
            ctx.store.append_audit(&audit).await?;
            Ok(Created::New(view(t, now)))
        }
        Some(existing) if existing == t => Ok(Created::Existing(view(existing, now))),
        Some(existing) => Err(ServiceError::TournamentConflict(existing.tournament_id)),
    }
}

/// What an operator may change of a defined tournament (`PATCH /tournaments/{t}`): its
/// texts, its caps, and a league's zones and rewards, each applying from the change on
/// (a league's, at the next seal: the dry run shows a change on a sealed occurrence
/// first). What would move a running occurrence's windows, boards or cohorts (the
/// schedule, the policy, the cohort size, the grace, the game) is not here; neither are
/// a league's tiers themselves (members hold them by id).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TournamentChange {
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub category: Option<String>,
    #[serde(default)]
    pub max_players: Option<u32>,
    #[serde(default)]
    pub max_attempts: Option<u32>,
    #[serde(default)]
    pub league: Option<leaderboard_rules::league::League>,
    /// A new reward table (docs/rewards.md), used from the next seal on.
    pub rewards: Option<leaderboard_rules::reward::RewardTable>,
    /// Why (audited): required, as every operator action's.
    #[serde(default)]
    pub reason: Option<serde_json::Value>,
}

impl TournamentChange {
    /// `t` with this change, checked as a definition is; the names of the fields it
    /// changes (none: the same definition again).
    fn applied(&self, t: &Tournament) -> Result<(Tournament, Vec<&'static str>), DomainError> {
        let mut new = t.clone();
        new.title = self.title.clone().unwrap_or(new.title);
        new.description = self.description.clone().or(new.description);
        new.category = self.category.clone().or(new.category);
        new.max_players = self.max_players.or(new.max_players);
        new.max_attempts = self.max_attempts.or(new.max_attempts);
        if let Some(league) = &self.league {
            let Some(was) = &t.league else {
                return Err(DomainError::NotChangeable {
                    field: "league",
                    reason: "a tournament that is not a league cannot become one".into(),
                });
            };
            let ids = |l: &leaderboard_rules::league::League| {
                l.tiers.iter().map(|t| t.id.clone()).collect::<Vec<_>>()
            };
            if ids(league) != ids(was) {
                return Err(DomainError::NotChangeable {
                    field: "league.tiers",
                    reason: format!(
                        "the tiers' ids cannot change (members hold them): {}",
                        ids(was).join(", ")
                    ),
                });
            }
            new.league = Some(league.clone());
        }
        new.rewards = self.rewards.clone().or(new.rewards);
        let new = new.validated()?;
        let changed = [
            ("title", new.title != t.title),
            ("description", new.description != t.description),
            ("category", new.category != t.category),
            ("max_players", new.max_players != t.max_players),
            ("max_attempts", new.max_attempts != t.max_attempts),
            ("league", new.league != t.league),
            ("rewards", new.rewards != t.rewards),
        ];
        let changed = changed
            .iter()
            .filter(|(_, c)| *c)
            .map(|(f, _)| *f)
            .collect();
        Ok((new, changed))
    }
}

/// How many times a change is applied again to a definition that changed under it.
const UPDATE_ATTEMPTS: usize = 3;

/// Changes a tournament's definition, audited in the same write (the fields changed,
/// with the operator's reason). The same change again writes nothing; a change made
/// meanwhile by another operator is kept, this one applied over it.
#[instrument(skip(ctx, change))]
pub async fn update<S: ModerationStore + TournamentStore, I>(
    ctx: &Context<S, I>,
    op: &Operator,
    id: &str,
    change: TournamentChange,
) -> Result<TournamentView, ServiceError> {
    let reason = Reason::parse(ReasonBody {
        reason: change.reason.clone(),
    })?;
    for _ in 0..UPDATE_ATTEMPTS {
        let old = (ctx.store.get_tournament(id).await?)
            .ok_or_else(|| ServiceError::TournamentNotFound(id.to_owned()))?;
        let (new, changed) = change.applied(&old)?;
        if changed.is_empty() {
            return Ok(view(old, now_ms()));
        }
        let mut audit = record(op, AuditAction::UpdateTournament, &reason);
        audit.game = Some(new.game.clone());
        audit.detail = serde_json::json!({ "tournament_id": id, "changed": changed });
        if ctx.store.replace_tournament(&old, &new, &audit).await? {
            // Another container sees it within the cache's TTL; this one at once.
            ctx.tournaments.definitions.forget(&id.to_owned());
            ctx.tournaments.all.forget(&());
            return Ok(view(new, now_ms()));
        }
    }
    Err(ServiceError::TournamentConflict(id.to_owned()))
}

/// A tournament with its current occurrence, the players who joined it and whether it
/// is full (one query per seat shard; a league's, per tier: `max_players` caps each
/// tier, and it is full once every tier is).
#[instrument(skip(ctx))]
pub async fn get<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    id: &str,
) -> Result<TournamentView, ServiceError> {
    let t = ctx.tournaments.get(&ctx.store, id).await?;
    let mut v = view(t, now_ms());
    let tiers = v.definition.league.as_ref().map_or(1, |l| l.tiers.len());
    let lb = &v.occurrence.leaderboard_id;
    let per_tier = try_join_all((0..tiers).map(|tier| async move {
        let seats = tier_seats(tier);
        let highest = ctx.store.highest_seat(lb, seats.clone()).await?;
        Ok::<_, ServiceError>(highest.map_or(0, |s| s + 1 - seats.start))
    }))
    .await?;
    v.occurrence.players_joined = Some(per_tier.iter().sum());
    v.occurrence.full = Some(
        (v.definition.max_players).is_some_and(|m| per_tier.iter().all(|&n| n >= u64::from(m))),
    );
    Ok(v)
}

/// Tournaments by id, `limit` (1-100, default 100) after the id `after`.
#[instrument(skip(ctx))]
pub async fn list<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    after: Option<&str>,
    limit: Option<&str>,
) -> Result<TournamentList, ServiceError> {
    let limit = match limit {
        None => MAX_PAGE,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=MAX_PAGE).contains(n))
            .ok_or_else(|| {
                leaderboard_rules::error::DomainError::invalid("limit", "must be 1 to 100")
            })?,
    };
    let after = after
        .map(|a| leaderboard_rules::tournament::parse_id("after", a))
        .transpose()?;
    let page = ctx
        .store
        .list_tournaments(Paging::new(after.as_deref(), limit))
        .await?;
    let now = now_ms();
    Ok(TournamentList {
        tournaments: page.tournaments.into_iter().map(|t| view(t, now)).collect(),
        next: page.next,
    })
}

/// The player's membership of the occurrence, strongly consistent.
pub(crate) async fn member_of<S: TournamentStore, I>(
    ctx: &Context<S, I>,
    occ: &LeaderboardId,
    player: &PlayerId,
) -> Result<Option<leaderboard_rules::tournament::Member>, ServiceError> {
    Ok(ctx
        .store
        .get_member(occ, player, Consistency::Strong)
        .await?)
}
