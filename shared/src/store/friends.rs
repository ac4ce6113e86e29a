//! [`FriendsSource`]: the social graph.

use std::future::Future;

use crate::ids::PlayerId;
use crate::store::FriendsError;

/// Who a player's friends are.
pub trait FriendsSource: Send + Sync {
    fn friends_of(
        &self,
        player: &PlayerId,
    ) -> impl Future<Output = Result<Vec<PlayerId>, FriendsError>> + Send;
}
