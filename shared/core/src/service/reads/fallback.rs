//! What a read does when its normal source cannot answer: the last good answer this
//! container gave (both backends down), which fallbacks count as degraded, and reporting
//! a board whose index is not ready for repair.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use tracing::warn;

use super::reply::{Answer, Source};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::ttl_cache::TtlCache;
use crate::store::{Health, IndexError, RankIndex};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::time::now_ms;

/// The last good answer of each read this container served, for when both Redis and
/// DynamoDB fail. Bounded in size and age.
pub struct LastKnown(TtlCache<String, (Arc<dyn Any + Send + Sync>, i64)>);

/// How old a last-known answer may be.
pub const LAST_KNOWN_TTL: Duration = Duration::from_secs(600);

impl Default for LastKnown {
    fn default() -> Self {
        Self(TtlCache::bounded(LAST_KNOWN_TTL, 10_000))
    }
}

impl LastKnown {
    fn remember<T: Answer>(&self, key: String, reply: &T) {
        self.0.put(key, (Arc::new(reply.clone()), now_ms()));
    }

    fn recall<T: Answer>(&self, key: &str) -> Option<T> {
        let (any, at) = self.0.get(&key.to_owned())?;
        let mut reply = any.downcast_ref::<T>()?.clone();
        let p = reply.provenance();
        p.source = Source::Cache;
        p.degraded = true;
        p.stale_ms = Some((now_ms() - at).max(0) as u64);
        Some(reply)
    }

    /// Keeps a fresh answer, or answers from memory when the backends are unavailable.
    pub(super) fn settle<T: Answer>(
        &self,
        key: String,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        match result {
            Ok(reply) => {
                self.remember(key, &reply);
                Ok(reply)
            }
            Err(
                e @ (ServiceError::Store(_)
                | ServiceError::Index(_)
                | ServiceError::Friends(_)
                | ServiceError::RankUnavailable(_)),
            ) => match self.recall(&key) {
                Some(reply) => {
                    warn!(error = %e, key, "backends unavailable; serving the last known answer");
                    Ok(reply)
                }
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

/// True for boards whose reads go to DynamoDB when Redis has nothing: closed windows
/// (their keys expire after the retention period) that keep their rank order there.
pub(super) fn history(board: &Board) -> bool {
    board.rank_index && closed_window(board)
}

/// True for a time window past its close.
fn closed_window(board: &Board) -> bool {
    board.window.is_some() && board.effective_status(now_ms()) == BoardStatus::Closed
}

/// Whether a read in rank order that Redis could not answer (`err`) may go to
/// DynamoDB's rank order, and whether that is a degradation ([`degraded_by`]). A board
/// that keeps none (`Board::rank_index`) cannot: it is reported for repair (a rebuild
/// reads its rows, not a rank order) and the read answers 503 `rank_unavailable`, or
/// the last known answer; a closed window past Redis's retention answers 410
/// `window_expired` (its final standings are its sealed results).
pub(super) async fn rank_order_after<S, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    err: &IndexError,
) -> Result<bool, ServiceError> {
    if board.rank_index {
        return Ok(degraded_by(ctx, board, err).await);
    }
    let lb = &board.leaderboard_id;
    let expired = ctx
        .settings
        .index_expire_at(board)
        .is_some_and(|at| now_ms() / 1000 >= at);
    if expired {
        return Err(ServiceError::WindowExpired(lb.clone()));
    }
    warn!(board = %lb, error = %err, "rank index unavailable and no rank order in DynamoDB");
    if let IndexError::NotReady(health) = err {
        ctx.repairs.report(&ctx.index, lb, *health).await;
    }
    Err(ServiceError::RankUnavailable(lb.clone()))
}

/// Whether falling back to DynamoDB after `err` is a degradation (it is not for a
/// closed window whose keys expired as intended), logging it when it is. A board whose
/// index is not ready is reported for repair.
pub(super) async fn degraded_by<S, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    err: &IndexError,
) -> bool {
    let expected = closed_window(board) && matches!(err, IndexError::NotReady(Health::Missing));
    if expected {
        return false;
    }
    warn!(board = %board.leaderboard_id, error = %err, "rank index unavailable; reading DynamoDB");
    if let IndexError::NotReady(health) = err {
        ctx.repairs
            .report(&ctx.index, &board.leaderboard_id, *health)
            .await;
    }
    true
}
