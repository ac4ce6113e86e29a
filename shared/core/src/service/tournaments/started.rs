//! `leaderboard.tournament.started`: published once per occurrence, by the seal's
//! sweep (every five minutes), so start-of-event jobs can hang on it. The same rules as
//! a window's seal make it once: a run claims the occurrence's `{board}:started` lease,
//! publishes with the lease held, then records it published; only a run that loses its
//! lease between the two (a crash) publishes again, with the same `start_id`.

use leaderboard_rules::page::Paging;
use tracing::{info, instrument};

use crate::service::ServiceError;
use crate::service::once::publish_once;
use crate::store::{EventPublisher, SealStore, TournamentStarted, TournamentStore};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::tournament::Tournament;

/// Tournaments read per page.
const PAGE: u32 = 100;

/// The started event of `t`'s occurrence running at `now`, if one runs.
fn started(t: &Tournament, now: i64) -> Option<TournamentStarted> {
    let occ = t.schedule.occurrence_at(now).ok()?;
    let lb = t.board_id(&occ);
    Some(TournamentStarted {
        start_id: lb.to_string(),
        tournament_id: t.tournament_id.clone(),
        occurrence: occ.key,
        game: t.game.clone(),
        mode: t.mode.clone(),
        start: occ.start,
        end: occ.end,
        leaderboard_id: lb,
        cohort_size: t.cohort_size,
        max_players: t.max_players,
        max_attempts: t.max_attempts,
    })
}

/// Publishes the started event of every running occurrence not announced yet; returns
/// the occurrences this run announced.
#[instrument(skip_all)]
pub async fn announce<S: SealStore + TournamentStore, E: EventPublisher>(
    store: &S,
    events: &E,
    now: i64,
) -> Result<Vec<LeaderboardId>, ServiceError> {
    let mut announced = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store
            .list_tournaments(Paging::new(after.as_deref(), PAGE))
            .await?;
        for event in page.tournaments.iter().filter_map(|t| started(t, now)) {
            let marker = LeaderboardId::parse(&format!("{}:started", event.leaderboard_id))?;
            if publish_once(store, &marker, now, || events.tournament_started(&event)).await? {
                info!(occurrence = %event.leaderboard_id, "tournament started");
                announced.push(event.leaderboard_id);
            }
        }
        after = page.next;
        if after.is_none() {
            return Ok(announced);
        }
    }
}
