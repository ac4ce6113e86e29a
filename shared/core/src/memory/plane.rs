//! The control plane's twin: a fixed replication group, no events, or down.

use crate::store::{CacheEvent, CachePlane, NodeGroup, PlaneError, ReplicationGroup};

/// A replication group (`even`: `shards` shards splitting the slots evenly); `None`
/// plays a control plane that fails.
#[derive(Clone)]
pub struct MemoryPlane(pub Option<ReplicationGroup>);

impl MemoryPlane {
    pub fn even(id: &str, shards: u16) -> Self {
        let per = 16_384 / shards;
        let node_groups = (0..shards)
            .map(|i| {
                let hi = if i + 1 == shards {
                    16_383
                } else {
                    (i + 1) * per - 1
                };
                NodeGroup {
                    node_group_id: format!("{:04}", i + 1),
                    status: "available".into(),
                    slots: format!("{}-{hi}", i * per),
                    members: vec![],
                }
            })
            .collect();
        Self(Some(ReplicationGroup {
            replication_group_id: id.into(),
            status: "available".into(),
            cluster_mode: true,
            node_groups,
        }))
    }
}

impl CachePlane for MemoryPlane {
    async fn describe(&self) -> Result<ReplicationGroup, PlaneError> {
        self.0.clone().ok_or_else(|| {
            PlaneError::new("DescribeReplicationGroups", std::io::Error::other("down"))
        })
    }

    async fn events(&self, _hours: u32) -> Result<Vec<CacheEvent>, PlaneError> {
        Err(PlaneError::new(
            "DescribeEvents",
            std::io::Error::other("not offered"),
        ))
    }
}
