//! [`MappingStore`]: the schema mapping of each event source, versioned. The current
//! version is read by the stream-ingest function; every version stays readable so a
//! dead-lettered record can be traced to the mapping that refused it.

use std::future::Future;

use crate::store::StoreError;
use leaderboard_rules::mapping::Mapping;

pub trait MappingStore: Send + Sync {
    /// The source's current mapping (`None`: none is stored).
    fn get_mapping(
        &self,
        source: &str,
    ) -> impl Future<Output = Result<Option<Mapping>, StoreError>> + Send;

    /// One version of the source's mapping.
    fn get_mapping_version(
        &self,
        source: &str,
        version: u64,
    ) -> impl Future<Output = Result<Option<Mapping>, StoreError>> + Send;

    /// Stores `mapping` as version `mapping.version` of its source, which becomes the
    /// current one, unless that version exists already (another change came first:
    /// false). Versions are never overwritten.
    fn put_mapping(
        &self,
        mapping: &Mapping,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
