//! `EventBridgePublisher`: the events other services react to, put on an EventBridge bus
//! (`EVENT_BUS_NAME`) with source [`SOURCE`]. A rewards service subscribes with a rule on
//! `detail-type` `leaderboard.window.closed`; start-of-event jobs on
//! `leaderboard.tournament.started`; a league's rewards and tier changes on
//! `leaderboard.league.settled`.

use serde::Serialize;

use crate::store::StoreError;
use crate::store::{EventPublisher, LeagueSettled, TournamentStarted, WindowClosed};

/// The `source` of every event.
pub const SOURCE: &str = "leaderboard";
/// The `detail-type` of a sealed window's event.
pub const WINDOW_CLOSED: &str = "leaderboard.window.closed";
/// The `detail-type` of a tournament occurrence's start.
pub const TOURNAMENT_STARTED: &str = "leaderboard.tournament.started";
/// The `detail-type` of a league cohort's settlement.
pub const LEAGUE_SETTLED: &str = "leaderboard.league.settled";

/// The EventBridge adapter of [`EventPublisher`].
#[derive(Clone)]
pub struct EventBridgePublisher {
    client: aws_sdk_eventbridge::Client,
    bus: String,
}

impl EventBridgePublisher {
    pub fn new(client: aws_sdk_eventbridge::Client, bus: impl Into<String>) -> Self {
        Self {
            client,
            bus: bus.into(),
        }
    }
}

impl EventBridgePublisher {
    /// Puts one event on the bus; refused entries are an error.
    async fn put(
        &self,
        detail_type: &str,
        detail: &impl Serialize,
        resource: String,
    ) -> Result<(), StoreError> {
        let entry = aws_sdk_eventbridge::types::PutEventsRequestEntry::builder()
            .event_bus_name(&self.bus)
            .source(SOURCE)
            .detail_type(detail_type)
            .detail(serde_json::to_string(detail).map_err(|e| StoreError::sdk("PutEvents", e))?)
            .resources(resource)
            .build();
        let out = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| StoreError::sdk("PutEvents", e))?;
        if out.failed_entry_count() > 0 {
            let why = out
                .entries()
                .iter()
                .filter_map(|e| e.error_message())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(StoreError::sdk(
                "PutEvents",
                std::io::Error::other(format!("the event was refused: {why}")),
            ));
        }
        Ok(())
    }
}

impl EventPublisher for EventBridgePublisher {
    async fn window_closed(&self, event: &WindowClosed) -> Result<(), StoreError> {
        let board = event.window.leaderboard_id.to_string();
        self.put(WINDOW_CLOSED, event, board).await
    }

    async fn tournament_started(&self, event: &TournamentStarted) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(TOURNAMENT_STARTED, event, board).await
    }

    async fn league_settled(&self, event: &LeagueSettled) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(LEAGUE_SETTLED, event, board).await
    }
}
