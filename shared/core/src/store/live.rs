//! [`LiveViews`]: which views of a board are watched, the last push of each, and the gate
//! that spaces a view's pushes. Kept beside the index (Redis in AWS), under the board's
//! hash tag.

use std::future::Future;
use std::time::Duration;

use crate::store::IndexError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::live::Published;
use leaderboard_rules::order::{BoardOrder, Direction};

/// The answer to a claim on a view's push gate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The gate is ours for the gap: the view's last push (if any) is this.
    Granted(Option<Published>),
    /// Another push holds the gate for this much longer.
    Wait(Duration),
}

/// The live views' state of each board.
pub trait LiveViews: Send + Sync {
    /// Marks the view `view_id` of `lb` (ordered `dir`) watched until `until_ms` (epoch
    /// ms), and the board among the [`LiveViews::watched_boards`] until then.
    fn watch(
        &self,
        on: BoardOrder<'_>,
        view_id: &str,
        until_ms: i64,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;

    /// The boards with a view watched at `now_ms`, each with its direction (what a
    /// rename looks through: any of their views may show the player).
    fn watched_boards(
        &self,
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<(LeaderboardId, Direction)>, IndexError>> + Send;

    /// The views of `lb` watched at `now_ms` (forgetting the ones that expired).
    fn watched(
        &self,
        lb: &LeaderboardId,
        now_ms: i64,
    ) -> impl Future<Output = Result<Vec<String>, IndexError>> + Send;

    /// The view's last push, if any.
    fn last_push(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
    ) -> impl Future<Output = Result<Option<Published>, IndexError>> + Send;

    /// Takes the view's push gate for `gap` if it is free.
    fn claim(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        gap: Duration,
    ) -> impl Future<Output = Result<Claim, IndexError>> + Send;

    /// Records a push (keeping the gate until its gap ends).
    fn record(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        push: &Published,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;

    /// Frees the gate at once (nothing was pushed).
    fn release(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
    ) -> impl Future<Output = Result<(), IndexError>> + Send;
}

/// Where pushes go: the events API.
pub trait Broadcaster: Send + Sync {
    /// Publishes `event` (JSON) on `channel`.
    fn publish(
        &self,
        channel: &str,
        event: String,
    ) -> impl Future<Output = Result<(), BroadcastError>> + Send;
}

/// A publish the events API did not take.
#[derive(Debug, thiserror::Error)]
pub enum BroadcastError {
    #[error("events API unreachable: {0}")]
    Unreachable(String),
    #[error("events API refused the publish ({status}): {body}")]
    Refused { status: u16, body: String },
    #[error("signing the publish failed: {0}")]
    Signing(String),
}
