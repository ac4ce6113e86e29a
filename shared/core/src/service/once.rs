//! Work done once across racing runs: a lease-held marker (a seal state of its own in
//! the seal store) claimed, the work done with the lease held, the marker recorded done.

use std::time::Duration;

use crate::service::ServiceError;
use crate::store::{SealStore, StoreError};
use leaderboard_rules::ids::LeaderboardId;

/// How long a run's claim holds without a progress write.
pub const LEASE: Duration = Duration::from_secs(60);

/// Publishes an event at most once per `marker` (a lease-held seal state of its own):
/// a run claims the marker, publishes with the lease held, then records it published;
/// only a run that loses its lease between the two (a crash, or a stall longer than
/// [`LEASE`]) publishes again, with the same event id. False when it was published
/// before or another run holds the marker.
pub(crate) async fn publish_once<S, F, Fut>(
    store: &S,
    marker: &LeaderboardId,
    now: i64,
    publish: F,
) -> Result<bool, ServiceError>
where
    S: SealStore,
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<(), StoreError>>,
{
    if (store.get_seal(marker).await?).is_some_and(|s| s.published) {
        return Ok(false);
    }
    let owner = crate::service::run_id();
    let lease = now + LEASE.as_millis() as i64;
    let Some(mut state) = store.claim_seal(marker, &owner, now, lease).await? else {
        return Ok(false);
    };
    publish().await?;
    state.published = true;
    store.save_seal(marker, &state).await?;
    Ok(true)
}
