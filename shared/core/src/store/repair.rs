//! The repair queue: where boards needing a rebuild are reported.

use super::Health;
use crate::store::QueueError;
use leaderboard_rules::ids::LeaderboardId;

/// A board whose rank index needs a rebuild, as reported to the repair queue (the body
/// of one SQS message).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RebuildNeeded {
    pub rebuild: LeaderboardId,
    /// The index health the reporter saw.
    pub health: Health,
}

/// Where boards whose index needs a rebuild are reported (the repair queue). Boxed
/// futures: the port is optional in a [`crate::service::Context`] and held as a trait
/// object there.
pub trait RepairQueue: Send + Sync {
    fn report<'a>(
        &'a self,
        need: &'a RebuildNeeded,
    ) -> futures::future::BoxFuture<'a, Result<(), QueueError>>;
}
