//! `leaderboard.window.opened` and `leaderboard.window.closing`: each window of every
//! family (its built-in periods but `ALL_TIME`, and its cron schedules) announces once
//! that it has begun and once that it ends within the family's lead
//! (`closing_lead_seconds`), for "next reset in ..." displays and start- and
//! end-of-event jobs (docs/schedules.md). The seal's sweep announces them: a window
//! opens within a sweep of its start; it closes within a sweep of its end less the lead,
//! or late but before its results stop being taken (end plus grace), when the sweeps
//! were held up. Once each: see [`publish_once`].

use leaderboard_rules::page::Paging;
use std::collections::BTreeMap;

use tracing::{info, instrument};

use crate::service::ServiceError;
use crate::service::once::publish_once;
use crate::store::{BoardStore, EventPublisher, SealStore, Turn, WindowTurn};
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::window::{GLOBAL, TimeWindow};

/// Families read per page.
const PAGE: u32 = 100;

/// Publishes every turn due at `now` that is not published yet; returns the turn ids
/// this run published.
#[instrument(skip_all)]
pub async fn announce<S: BoardStore + SealStore, E: EventPublisher>(
    store: &S,
    events: &E,
    now: i64,
) -> Result<Vec<String>, ServiceError> {
    let mut published = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = store
            .list_families(Paging::new(after.as_deref(), PAGE))
            .await?;
        for event in page.families.iter().flat_map(|f| due(f, now)) {
            let marker = LeaderboardId::parse(&event.turn_id)?;
            if publish_once(store, &marker, now, || events.window_turned(&event)).await? {
                info!(turn = %event.turn_id, "window turn published");
                published.push(event.turn_id);
            }
        }
        after = page.next;
        if after.is_none() {
            return Ok(published);
        }
    }
}

/// The turns of `family`'s windows due at `now`: the current window's opening, and the
/// closing of the current or the previous window once within the lead of its end, until
/// it stops taking results.
pub fn due(family: &Family, now: i64) -> Vec<WindowTurn> {
    let mut out = Vec::new();
    for period in family.all_periods() {
        let Ok(current) = family.window_of(period, now) else {
            continue;
        };
        let (Some(start), Some(_)) = (current.start, current.end) else {
            // ALL_TIME and rolling windows never turn.
            continue;
        };
        out.push(turn(family, &current, Turn::Opened));
        let previous = family.window_of(period, start - 1).ok();
        for w in previous.iter().chain([&current]) {
            let (Some(end), Some(closes_at)) = (w.end, w.closes_at(family.grace_ms)) else {
                continue;
            };
            if now >= end - family.closing_lead_ms && now < closes_at {
                out.push(turn(family, w, Turn::Closing));
            }
        }
    }
    out
}

/// The event of one turn of window `w` of `family`.
fn turn(family: &Family, w: &TimeWindow, turn: Turn) -> WindowTurn {
    let boards: BTreeMap<String, LeaderboardId> = std::iter::once(GLOBAL)
        .chain(family.regions.iter().map(String::as_str))
        .map(|scope| (scope.to_owned(), family.board_id(scope, w)))
        .collect();
    let key = w.key.clone().unwrap_or_default();
    let name = match turn {
        Turn::Opened => "opened",
        Turn::Closing => "closing",
    };
    WindowTurn {
        turn_id: format!(
            "{}:{}:{}:{key}:{name}",
            family.game,
            family.mode,
            w.period.as_str()
        ),
        turn,
        game: family.game.clone(),
        mode: family.mode.clone(),
        period: w.period,
        window: key,
        start: w.start.unwrap_or_default(),
        end: w.end.unwrap_or_default(),
        closes_at: w.closes_at(family.grace_ms).unwrap_or_default(),
        boards,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaderboard_rules::schedule::{Cron, Kind, Schedule, ScheduleId};
    use leaderboard_rules::time::at;
    use leaderboard_rules::window::Period;

    fn family() -> Family {
        Family {
            game: "g".into(),
            mode: "m".into(),
            policy: Default::default(),
            regions: vec!["EU".into()],
            periods: vec![Period::AllTime, Period::Daily],
            season: None,
            grace_ms: 300_000,
            dense_ranks: false,
            rank_index_periods: None,
            scores: Default::default(),
            integrity: None,
            schedules: vec![Schedule {
                id: ScheduleId::parse("id", "nightly").unwrap(),
                kind: Kind::Cron(Cron {
                    cron: "0 4 * * *".into(),
                    time_zone: "Europe/Stockholm".into(),
                    every: 1,
                    anchor: None,
                }),
            }],
            closing_lead_ms: 900_000,
            rewards: None,
        }
    }

    fn ids(now: &str) -> Vec<String> {
        due(&family(), at(now))
            .into_iter()
            .map(|t| t.turn_id)
            .collect()
    }

    #[test]
    fn a_window_opens_once_started_and_closes_within_its_lead_until_it_stops_taking_results() {
        // Noon: both windows have opened, neither is closing.
        assert_eq!(
            ids("2026-11-27T12:00:00Z"),
            [
                "g:m:DAILY:2026-11-27:opened",
                "g:m:nightly:20261127T0300Z:opened"
            ]
        );
        // 23:50Z is within 15 minutes of the day's end; Stockholm's 04:00 is not near.
        assert!(ids("2026-11-27T23:50:00Z").contains(&"g:m:DAILY:2026-11-27:closing".into()));
        // Just after midnight: the new day has opened, and the old one, still taking
        // results for its grace, is announced closing (late) if it was not yet.
        let after = ids("2026-11-28T00:02:00Z");
        assert!(after.contains(&"g:m:DAILY:2026-11-28:opened".into()));
        assert!(after.contains(&"g:m:DAILY:2026-11-27:closing".into()));
        // Past the grace: too late to announce.
        assert!(
            !ids("2026-11-28T00:06:00Z")
                .iter()
                .any(|t| t.ends_with("27:closing"))
        );
        let t = &due(&family(), at("2026-11-27T12:00:00Z"))[0];
        assert_eq!(t.boards["EU"].as_str(), "g:m:EU:DAILY:2026-11-27");
        assert_eq!(t.closes_at, at("2026-11-28T00:05:00Z"));
    }
}
