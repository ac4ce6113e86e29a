//! `EventBridgePublisher`: the events other services react to, put on an EventBridge bus
//! (`EVENT_BUS_NAME`) with source [`SOURCE`]. A rewards service subscribes with a rule on
//! `detail-type` `leaderboard.window.closed`; start-of-event jobs on
//! `leaderboard.tournament.started`; a league's rewards and tier changes on
//! `leaderboard.league.settled`; "next reset in ..." displays on
//! `leaderboard.window.opened` and `leaderboard.window.closing`; a review tool on
//! `leaderboard.result.held` (docs/integrity.md); an operations tool on
//! `leaderboard.board.reset` (docs/operations.md); a game's economy on
//! `leaderboard.rewards.decided` and `leaderboard.reward.claimed` (docs/rewards.md).

use serde::Serialize;

use leaderboard_core::store::StoreError;
use leaderboard_core::store::{
    BoardResetDone, EventPublisher, HeldResult, LeagueSettled, RewardClaimed, RewardsDecided,
    SealedWindow, TournamentStarted, Turn, WindowClosed, WindowTurn,
};
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};

/// The `source` of every event.
pub const SOURCE: &str = "leaderboard";
/// The `detail-type` of a sealed window's event.
pub(crate) const WINDOW_CLOSED: &str = "leaderboard.window.closed";
/// The `detail-type` of a tournament occurrence's start.
pub(crate) const TOURNAMENT_STARTED: &str = "leaderboard.tournament.started";
/// The `detail-type` of a league cohort's settlement.
pub(crate) const LEAGUE_SETTLED: &str = "leaderboard.league.settled";
/// The `detail-type`s of a family window's opening and its coming close.
pub(crate) const WINDOW_OPENED: &str = "leaderboard.window.opened";
pub(crate) const WINDOW_CLOSING: &str = "leaderboard.window.closing";
/// A result held for review by an integrity rule (docs/integrity.md).
pub(crate) const RESULT_HELD: &str = "leaderboard.result.held";
/// A board's reset done (docs/operations.md).
pub(crate) const BOARD_RESET: &str = "leaderboard.board.reset";
/// A sealed window's rewards, and a reward claimed (docs/rewards.md).
pub(crate) const REWARDS_DECIDED: &str = "leaderboard.rewards.decided";
pub(crate) const REWARD_CLAIMED: &str = "leaderboard.reward.claimed";

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
            .detail(serde_json::to_string(detail).map_err(|e| StoreError::call("PutEvents", e))?)
            .resources(resource)
            .build();
        let out = self
            .client
            .put_events()
            .entries(entry)
            .send()
            .await
            .map_err(|e| StoreError::call("PutEvents", e))?;
        if out.failed_entry_count() > 0 {
            let why = out
                .entries()
                .iter()
                .filter_map(|e| e.error_message())
                .collect::<Vec<_>>()
                .join("; ");
            return Err(StoreError::call(
                "PutEvents",
                std::io::Error::other(format!("the event was refused: {why}")),
            ));
        }
        Ok(())
    }
}

/// A window-closed event as it goes on the bus: as stored, but its top's scores written
/// as the board writes them (docs/decimals.md).
#[derive(Serialize)]
struct ClosedDetail<'a> {
    seal_id: &'a str,
    #[serde(flatten)]
    window: &'a SealedWindow,
    sealed_at: i64,
    total: u64,
    top: Vec<PlacedDetail<'a>>,
}

#[derive(Serialize)]
struct PlacedDetail<'a> {
    rank: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    player_id: Option<&'a PlayerId>,
    score: Shown,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscores: Option<Vec<i64>>,
    reached_at: i64,
}

impl<'a> ClosedDetail<'a> {
    fn of(e: &'a WindowClosed) -> Self {
        let top = e.top.iter().map(|p| PlacedDetail {
            rank: p.rank,
            player_id: p.player_id.as_ref(),
            score: e.window.scores.show_scaled(p.score),
            subscores: e.window.scores.tiebreaks.shown(&p.ties),
            reached_at: p.reached_at,
        });
        Self {
            seal_id: &e.seal_id,
            window: &e.window,
            sealed_at: e.sealed_at,
            total: e.total,
            top: top.collect(),
        }
    }
}

impl EventPublisher for EventBridgePublisher {
    async fn window_closed(&self, event: &WindowClosed) -> Result<(), StoreError> {
        let board = event.window.leaderboard_id.to_string();
        self.put(WINDOW_CLOSED, &ClosedDetail::of(event), board)
            .await
    }

    async fn tournament_started(&self, event: &TournamentStarted) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(TOURNAMENT_STARTED, event, board).await
    }

    async fn league_settled(&self, event: &LeagueSettled) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(LEAGUE_SETTLED, event, board).await
    }

    async fn window_turned(&self, event: &WindowTurn) -> Result<(), StoreError> {
        let detail_type = match event.turn {
            Turn::Opened => WINDOW_OPENED,
            Turn::Closing => WINDOW_CLOSING,
        };
        let family = format!("{}:{}", event.game, event.mode);
        self.put(detail_type, event, family).await
    }

    async fn result_held(&self, held: &HeldResult) -> Result<(), StoreError> {
        let board = held.leaderboard_id.to_string();
        self.put(RESULT_HELD, &HeldDetail::of(held), board).await
    }

    async fn board_reset(&self, event: &BoardResetDone) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(BOARD_RESET, event, board).await
    }

    async fn rewards_decided(&self, event: &RewardsDecided) -> Result<(), StoreError> {
        let board = event.window.leaderboard_id.to_string();
        self.put(REWARDS_DECIDED, event, board).await
    }

    async fn reward_claimed(&self, event: &RewardClaimed) -> Result<(), StoreError> {
        let board = event.leaderboard_id.to_string();
        self.put(REWARD_CLAIMED, event, board).await
    }
}

/// A held result as it goes on the bus: the queue's id, the result as received (scores
/// as its board writes them), the rule and its figures.
#[derive(Serialize)]
struct HeldDetail<'a> {
    id: String,
    game: &'a str,
    leaderboard_id: &'a LeaderboardId,
    player_id: &'a PlayerId,
    match_id: &'a MatchId,
    score: Shown,
    #[serde(skip_serializing_if = "Option::is_none")]
    event_ts: Option<i64>,
    held_at: i64,
    rule: &'static str,
    value: i64,
    limit: i64,
}

impl<'a> HeldDetail<'a> {
    fn of(h: &'a HeldResult) -> Self {
        Self {
            id: h.id(),
            game: &h.game,
            leaderboard_id: &h.leaderboard_id,
            player_id: &h.player_id,
            match_id: &h.match_id,
            score: h.scores.show(h.score),
            event_ts: h.event_ts,
            held_at: h.held_at,
            rule: h.rule.code(),
            value: h.value,
            limit: h.limit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaderboard_core::store::Placing;
    use leaderboard_rules::decimal::ScoreFormat;
    use leaderboard_rules::window::Period;

    fn closed(scores: ScoreFormat) -> WindowClosed {
        let place = |rank: u64, player: &str, score: i64| Placing {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            rank,
            player_id: Some(PlayerId::parse(player).unwrap()),
            score,
            reached_at: 7,
        };
        WindowClosed {
            seal_id: "g:m:GLOBAL:WEEKLY:2026-W47".into(),
            window: SealedWindow {
                leaderboard_id: leaderboard_rules::ids::LeaderboardId::parse(
                    "g:m:GLOBAL:WEEKLY:2026-W47",
                )
                .unwrap(),
                game: "g".into(),
                mode: "m".into(),
                scope: "GLOBAL".into(),
                period: Period::Weekly,
                window: "2026-W47".into(),
                start: 0,
                end: 1,
                scores,
            },
            sealed_at: 2,
            total: 3,
            top: vec![
                place(1, "a", 83_417),
                place(2, "b", -50),
                Placing {
                    player_id: None,
                    ..place(3, "c", 0)
                },
            ],
        }
    }

    #[test]
    fn an_integer_windows_event_is_what_was_stored_and_a_decimal_ones_top_has_its_places() {
        let integer = closed(ScoreFormat::default());
        assert_eq!(
            serde_json::to_value(ClosedDetail::of(&integer)).unwrap(),
            serde_json::to_value(&integer).unwrap()
        );
        let three = ScoreFormat::asked(Some(3), None, None).unwrap();
        let detail = serde_json::to_string(&ClosedDetail::of(&closed(three))).unwrap();
        let scores: Vec<&str> = detail.split("\"score\":").skip(1).collect();
        assert!(scores[0].starts_with("83.417,"), "{detail}");
        assert!(scores[1].starts_with("-0.050,"), "{detail}");
        assert!(scores[2].starts_with("0.000,"), "{detail}");
        assert!(
            detail.contains(r#""scores":{"decimals":3,"style":"NUMBER"}"#),
            "{detail}"
        );
    }
}
