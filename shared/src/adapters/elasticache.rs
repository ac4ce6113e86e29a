//! `ElastiCachePlane`: the [`CachePlane`] of the rank index's replication group
//! (`CACHE_REPLICATION_GROUP_ID`), read with `DescribeReplicationGroups` and
//! `DescribeEvents`.

use aws_sdk_elasticache::error::ProvideErrorMetadata;
use aws_sdk_elasticache::primitives::DateTimeFormat;

use leaderboard_core::store::{
    CacheEvent, CachePlane, NodeGroup, NodeMember, PlaneError, ReplicationGroup,
};

/// The ElastiCache adapter of [`CachePlane`].
#[derive(Clone)]
pub struct ElastiCachePlane {
    client: aws_sdk_elasticache::Client,
    group: String,
}

impl ElastiCachePlane {
    pub fn new(client: aws_sdk_elasticache::Client, group: impl Into<String>) -> Self {
        Self {
            client,
            group: group.into(),
        }
    }
}

/// The service's own code and message where it gave them (`InvalidAction: ...`), else
/// the SDK's error (a timeout, a refused connection).
fn plane_error<E, R>(op: &'static str, e: aws_sdk_elasticache::error::SdkError<E, R>) -> PlaneError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match (e.code(), e.message()) {
        (Some(code), Some(message)) => {
            PlaneError::new(op, std::io::Error::other(format!("{code}: {message}")))
        }
        _ => PlaneError::new(op, e),
    }
}

fn text(s: Option<&str>) -> String {
    s.unwrap_or_default().to_owned()
}

impl CachePlane for ElastiCachePlane {
    async fn describe(&self) -> Result<ReplicationGroup, PlaneError> {
        const OP: &str = "DescribeReplicationGroups";
        let out = self
            .client
            .describe_replication_groups()
            .replication_group_id(&self.group)
            .send()
            .await
            .map_err(|e| plane_error(OP, e))?;
        let rg = out.replication_groups().first().ok_or_else(|| {
            PlaneError::new(
                OP,
                std::io::Error::other(format!("no replication group {}", self.group)),
            )
        })?;
        let node_groups = rg
            .node_groups()
            .iter()
            .map(|g| NodeGroup {
                node_group_id: text(g.node_group_id()),
                status: text(g.status()),
                slots: text(g.slots()),
                members: g
                    .node_group_members()
                    .iter()
                    .map(|m| NodeMember {
                        cache_cluster_id: text(m.cache_cluster_id()),
                        role: m.current_role().map(str::to_owned),
                        availability_zone: m.preferred_availability_zone().map(str::to_owned),
                    })
                    .collect(),
            })
            .collect();
        Ok(ReplicationGroup {
            replication_group_id: text(rg.replication_group_id()),
            status: text(rg.status()),
            cluster_mode: rg.cluster_enabled().unwrap_or(false),
            node_groups,
        })
    }

    async fn events(&self, hours: u32) -> Result<Vec<CacheEvent>, PlaneError> {
        const OP: &str = "DescribeEvents";
        // The group's own events and its nodes' (`<group>-0001-001`), as one log.
        let minutes = i32::try_from(hours.saturating_mul(60))
            .unwrap_or(i32::MAX)
            .min(20_160);
        let out = self
            .client
            .describe_events()
            .duration(minutes)
            .max_records(100)
            .send()
            .await
            .map_err(|e| plane_error(OP, e))?;
        Ok(out
            .events()
            .iter()
            .filter(|e| {
                e.source_identifier()
                    .is_some_and(|s| s.starts_with(&self.group))
            })
            .map(|e| CacheEvent {
                date: e
                    .date()
                    .and_then(|d| d.fmt(DateTimeFormat::DateTime).ok())
                    .unwrap_or_default(),
                source_id: text(e.source_identifier()),
                source_type: e
                    .source_type()
                    .map(|t| t.as_str().to_owned())
                    .unwrap_or_default(),
                message: text(e.message()),
            })
            .collect())
    }
}
