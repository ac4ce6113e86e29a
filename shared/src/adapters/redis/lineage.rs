//! Boards found on another replication history than their node's (`INDEXMOVED` from
//! `prelude.lua`): adopted when that history is still a live master's (a clean slot
//! move), turned stale otherwise (a restart, a promoted replica).

use std::collections::HashMap;

use super::RedisRankIndex;
use super::calls::{Call, Settle};
use super::conn::Conn;
use super::keys::BoardKeys;
use leaderboard_core::store::IndexError;

/// Rounds of settling one call may go through before it gives up.
pub(super) const MAX_SETTLES: usize = 16;

/// The boards an error's `INDEXMOVED` replies name (a board whose marker names another
/// replication history than its node's, as `prelude.lua` raises it), as (key base,
/// that history): one for a script, any number for a pipeline.
pub(super) fn moved_boards(err: &redis::RedisError) -> Vec<(String, String)> {
    let Some(errors) = err.clone().into_server_errors() else {
        return Vec::new();
    };
    errors
        .iter()
        .filter(|(_, e)| e.code() == "INDEXMOVED")
        .filter_map(|(_, e)| {
            let mut words = e.details()?.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect()
}

impl RedisRankIndex {
    /// Settles the boards `INDEXMOVED` errors named, as (key base, replication id): each
    /// marker names another history than its node's. Where that history is still a live
    /// master's (the board's keys were migrated here intact), the board is adopted here;
    /// otherwise (this node restarted, or is a promoted replica) it turns stale. See
    /// `settle.lua`.
    pub(super) async fn settle(&self, boards: &[(String, String)]) -> Result<(), IndexError> {
        let live = self.live_histories().await?;
        for (base, from) in boards {
            let adopt = live.iter().any(|h| h == from);
            let keys = BoardKeys::from_base(base);
            let inv = Settle {
                keys: &keys,
                from,
                adopt,
            }
            .invocation(&self.scripts);
            let mut conn = self.conn().await?;
            let state: String = self.bounded(inv.invoke_async(&mut conn)).await?;
            tracing::warn!(keys = %base, from = %from, live = adopt, state, "rank index found on another replication history; settled");
        }
        Ok(())
    }

    /// The replication ids of the masters that serve the cluster now (each in a healthy
    /// cluster state). A single node has no other history a board could move from.
    pub(super) async fn live_histories(&self) -> Result<Vec<String>, IndexError> {
        let Conn::Cluster(cluster) = self.conn().await? else {
            return Ok(Vec::new());
        };
        let masters = || {
            redis::cluster_routing::RoutingInfo::MultiNode((
                redis::cluster_routing::MultipleNodeRoutingInfo::AllMasters,
                None,
            ))
        };
        let mut info = redis::cmd("INFO");
        info.arg("replication");
        let mut state = redis::cmd("CLUSTER");
        state.arg("INFO");
        let (mut a, mut b) = (cluster.clone(), cluster);
        let (infos, states) = futures::try_join!(
            self.bounded(a.route_command(info, masters())),
            self.bounded(b.route_command(state, masters())),
        )?;
        let by_node = |v: redis::Value| -> HashMap<String, String> {
            let redis::Value::Map(pairs) = v else {
                return HashMap::new();
            };
            pairs
                .into_iter()
                .filter_map(|(k, v)| {
                    Some((
                        redis::from_redis_value::<String>(k).ok()?,
                        redis::from_redis_value::<String>(v).ok()?,
                    ))
                })
                .collect()
        };
        let healthy = by_node(states);
        Ok(by_node(infos)
            .into_iter()
            .filter(|(node, _)| {
                healthy
                    .get(node)
                    .is_some_and(|s| s.contains("cluster_state:ok"))
            })
            .filter_map(|(_, text)| {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix("master_replid:"))
                    .map(str::to_owned)
            })
            .collect())
    }
}
