//! The rank index's cluster as its control plane (ElastiCache) describes it: node
//! groups, the hash slots each holds, which member is primary, and recent events. The
//! operator console shows it beside a board's index health, and the repair uses the slot
//! map to find the boards a failover or a node replacement touched.

use std::future::Future;

use serde::Serialize;

/// A replication group: the cluster the rank index lives on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReplicationGroup {
    pub replication_group_id: String,
    pub status: String,
    pub cluster_mode: bool,
    pub node_groups: Vec<NodeGroup>,
}

/// A shard: its primary and replicas, and the hash slots it serves (`"0-5460"`, or
/// several ranges joined by commas).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeGroup {
    pub node_group_id: String,
    pub status: String,
    pub slots: String,
    pub members: Vec<NodeMember>,
}

/// One node of a shard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeMember {
    pub cache_cluster_id: String,
    /// `primary` or `replica` where the control plane says (cluster mode off, or a
    /// deployment that reports it).
    pub role: Option<String>,
    pub availability_zone: Option<String>,
}

/// One event of the control plane's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CacheEvent {
    /// RFC 3339.
    pub date: String,
    pub source_id: String,
    pub source_type: String,
    pub message: String,
}

impl NodeGroup {
    /// Whether the shard serves `slot`. An empty slot list (cluster mode off) serves all.
    pub fn holds(&self, slot: u16) -> bool {
        if self.slots.trim().is_empty() {
            return true;
        }
        self.slots.split(',').any(|range| {
            let mut ends = range.trim().splitn(2, '-').map(str::parse::<u16>);
            match (ends.next(), ends.next()) {
                (Some(Ok(lo)), Some(Ok(hi))) => (lo..=hi).contains(&slot),
                (Some(Ok(one)), None) => one == slot,
                _ => false,
            }
        })
    }
}

impl ReplicationGroup {
    /// The shard that serves `slot`.
    pub fn group_of(&self, slot: u16) -> Option<&NodeGroup> {
        self.node_groups.iter().find(|g| g.holds(slot))
    }
}

/// The control plane's call failed (refused, throttled, not offered by the endpoint).
#[derive(Debug, thiserror::Error)]
#[error("ElastiCache {op} failed")]
pub struct PlaneError {
    pub op: &'static str,
    #[source]
    pub source: Box<dyn std::error::Error + Send + Sync>,
}

impl PlaneError {
    pub fn new(op: &'static str, e: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            op,
            source: Box::new(e),
        }
    }
}

/// Reads the rank index's replication group from its control plane.
pub trait CachePlane: Send + Sync {
    fn describe(&self) -> impl Future<Output = Result<ReplicationGroup, PlaneError>> + Send;

    /// The group's events of the last `hours`, newest first.
    fn events(
        &self,
        hours: u32,
    ) -> impl Future<Output = Result<Vec<CacheEvent>, PlaneError>> + Send;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(id: &str, slots: &str) -> NodeGroup {
        NodeGroup {
            node_group_id: id.into(),
            status: "available".into(),
            slots: slots.into(),
            members: vec![],
        }
    }

    #[test]
    fn a_slot_belongs_to_the_shard_whose_ranges_hold_it() {
        let rg = ReplicationGroup {
            replication_group_id: "rg".into(),
            status: "available".into(),
            cluster_mode: true,
            node_groups: vec![
                group("0001", "0-5460"),
                group("0002", "5461-10922,16000"),
                group("0003", "10923-16383"),
            ],
        };
        assert_eq!(rg.group_of(0).unwrap().node_group_id, "0001");
        assert_eq!(rg.group_of(5460).unwrap().node_group_id, "0001");
        assert_eq!(rg.group_of(5461).unwrap().node_group_id, "0002");
        assert_eq!(rg.group_of(16000).unwrap().node_group_id, "0002");
        assert_eq!(rg.group_of(16001).unwrap().node_group_id, "0003");
        assert!(group("x", "").holds(12));
        assert!(!group("x", "garbage").holds(12));
    }
}
