//! [`FriendsSource`]: the social graph.

use std::future::Future;

use crate::store::FriendsError;
use leaderboard_rules::ids::PlayerId;

/// Who a player's friends are.
pub trait FriendsSource: Send + Sync {
    fn friends_of(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Vec<PlayerId>, FriendsError>> + Send;
}
