//! The rank index's cluster seen from its control plane (docs/console.md):
//! - [`index_view`] answers `GET /admin/index`: the replication group (shards, their
//!   slots, members), its recent events, and one board's index health with the slot and
//!   shard it lives on. Each part that cannot be read is named in `unavailable`, and the
//!   rest is still answered: a console must work best when the cache does not.
//! - [`on_notice`] handles the group's ElastiCache notifications (SNS). A failover, a
//!   node replacement or a reboot may lose writes the node had not yet replicated, so
//!   the boards whose slots the affected shard serves are marked stale and reported for
//!   repair at once: each is rebuilt from DynamoDB before its first read has to find it.
//!   When the shard cannot be told (a node id of another shape, the control plane not
//!   answering), every board is.

use serde::Serialize;
use tracing::{info, warn};

use super::{Context, ServiceError, rebuild};
use crate::store::{
    BoardStore, CacheEvent, CachePlane, Health, IndexUpkeep, RebuildStore, ReplicationGroup,
};
use leaderboard_rules::ids::LeaderboardId;

/// How far back the index view reads the control plane's events.
pub(crate) const EVENT_HOURS: u32 = 24;

/// The notifications after which a shard's data may be behind what DynamoDB holds.
pub(crate) const LOSSY: &[&str] = &[
    "ElastiCache:FailoverComplete",
    "ElastiCache:CacheNodeReplaceComplete",
    "ElastiCache:CacheNodesRebooted",
    "ElastiCache:CacheClusterRecoverComplete",
];

/// `GET /admin/index`.
#[derive(Debug, Serialize)]
pub struct IndexView {
    /// Null when the deployment names no replication group (`CACHE_REPLICATION_GROUP_ID`)
    /// or its control plane did not answer.
    pub replication_group: Option<ReplicationGroup>,
    pub events: Option<Vec<CacheEvent>>,
    pub board: Option<BoardIndex>,
    /// What could not be read, one sentence each.
    pub unavailable: Vec<String>,
}

/// One board's index: its health, its slot and the shard serving it, and the rebuild in
/// progress (when one is).
#[derive(Debug, Serialize)]
pub struct BoardIndex {
    pub leaderboard_id: LeaderboardId,
    /// Null when Redis did not answer.
    pub health: Option<Health>,
    pub slot: u16,
    pub node_group_id: Option<String>,
    pub rebuild: Option<RebuildProgress>,
}

#[derive(Debug, Serialize)]
pub struct RebuildProgress {
    pub loaded: u64,
    pub started_at: i64,
}

/// What `GET /admin/index` shows; `lb` must name an existing board.
pub async fn index_view<S: BoardStore + RebuildStore, I: IndexUpkeep, P: CachePlane>(
    store: &S,
    index: &I,
    plane: Option<&P>,
    lb: Option<&LeaderboardId>,
) -> Result<IndexView, ServiceError> {
    let mut unavailable = Vec::new();
    let (replication_group, events) = match plane {
        None => {
            unavailable
                .push("no replication group is configured (CACHE_REPLICATION_GROUP_ID)".into());
            (None, None)
        }
        Some(plane) => {
            let (group, events) = tokio::join!(plane.describe(), plane.events(EVENT_HOURS));
            let group = group.map_err(|e| unavailable.push(sentence(&e))).ok();
            let events = events.map_err(|e| unavailable.push(sentence(&e))).ok();
            (group, events)
        }
    };
    let board = match lb {
        None => None,
        Some(lb) => {
            super::boards::get_board(store, lb).await?;
            let health = match index.health(std::slice::from_ref(lb)).await {
                Ok(h) => h.first().copied(),
                Err(e) => {
                    unavailable.push(format!("the rank index did not answer: {e}"));
                    None
                }
            };
            let slot = index.slot_of(lb);
            let rebuild = store.get_checkpoint(lb).await?.map(|c| RebuildProgress {
                loaded: c.loaded,
                started_at: c.started_at,
            });
            Some(BoardIndex {
                leaderboard_id: lb.clone(),
                health,
                slot,
                node_group_id: replication_group
                    .as_ref()
                    .and_then(|g| g.group_of(slot))
                    .map(|g| g.node_group_id.clone()),
                rebuild,
            })
        }
    };
    Ok(IndexView {
        replication_group,
        events,
        board,
        unavailable,
    })
}

fn sentence(e: &(dyn std::error::Error + 'static)) -> String {
    leaderboard_rules::error::error_chain(e)
}

/// The (event, source) pairs of one ElastiCache notification. The message is a JSON
/// object `{"ElastiCache:FailoverComplete": "rg-0001-002"}`; the console's "test
/// notification" and older topics send `ElastiCache:Event : source` as text.
pub fn notices(message: &str) -> Vec<(String, String)> {
    if let Ok(serde_json::Value::Object(map)) = serde_json::from_str(message) {
        return map
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
    }
    match message.split_once(':').map(|_| message.rsplit_once(" : ")) {
        Some(Some((event, source))) => vec![(event.trim().to_owned(), source.trim().to_owned())],
        _ => vec![(message.trim().to_owned(), String::new())],
    }
}

/// The shard a cluster-mode node id names: `<group>-0002-001` is shard `0002`.
pub(crate) fn node_group_of(source: &str) -> Option<&str> {
    let mut parts = source.rsplitn(3, '-');
    let member = parts.next()?;
    let group = parts.next()?;
    parts.next()?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (digits(member, 3) && digits(group, 4)).then_some(group)
}

/// What [`on_notice`] did.
#[derive(Debug, PartialEq, Eq)]
pub enum Noticed {
    /// Not an event that can lose index data.
    Ignored,
    /// These boards were marked stale and reported for repair.
    Marked(Vec<LeaderboardId>),
}

/// Marks the boards a lossy notification touches stale and reports each for repair.
pub async fn on_notice<S: BoardStore, I: IndexUpkeep, P: CachePlane>(
    ctx: &Context<S, I>,
    plane: Option<&P>,
    event: &str,
    source: &str,
) -> Result<Noticed, ServiceError> {
    if !LOSSY.contains(&event) {
        info!(event, source, "cache notification with nothing to repair");
        return Ok(Noticed::Ignored);
    }
    let boards: Vec<LeaderboardId> = rebuild::all_boards(&ctx.store)
        .await?
        .into_iter()
        .map(|b| b.leaderboard_id)
        .collect();
    let shard = match (node_group_of(source), plane) {
        (Some(id), Some(plane)) => match plane.describe().await {
            Ok(group) => group
                .node_groups
                .into_iter()
                .find(|g| g.node_group_id == id),
            Err(e) => {
                warn!(error = %sentence(&e), "no slot map; marking every board");
                None
            }
        },
        _ => None,
    };
    let touched: Vec<LeaderboardId> = match &shard {
        Some(shard) => boards
            .into_iter()
            .filter(|lb| shard.holds(ctx.index.slot_of(lb)))
            .collect(),
        None => boards,
    };
    ctx.index.mark_stale(&touched).await?;
    for lb in &touched {
        ctx.repairs.report(&ctx.index, lb, Health::Stale).await;
    }
    warn!(event, source, shard = ?shard.as_ref().map(|s| &s.node_group_id), boards = touched.len(),
          "cache notification: boards marked stale and reported for rebuild");
    Ok(Noticed::Marked(touched))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_notification_names_its_event_and_node_and_the_node_its_shard() {
        assert_eq!(
            notices(r#"{"ElastiCache:FailoverComplete":"lb-rank-0002-001"}"#),
            [(
                "ElastiCache:FailoverComplete".to_owned(),
                "lb-rank-0002-001".to_owned()
            )]
        );
        assert_eq!(
            notices("ElastiCache:CacheNodesRebooted : lb-rank-0001-002"),
            [(
                "ElastiCache:CacheNodesRebooted".to_owned(),
                "lb-rank-0001-002".to_owned()
            )]
        );
        assert_eq!(node_group_of("lb-rank-0002-001"), Some("0002"));
        assert_eq!(node_group_of("rank-001"), None);
        assert_eq!(node_group_of("lb-rank"), None);
        assert_eq!(node_group_of("x-12345-001"), None);
    }
}
