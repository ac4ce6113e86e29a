//! The in-memory [`MappingStore`]: every version by (source, version).

use super::store::MemoryStore;
use crate::store::MappingStore;
use crate::store::StoreError;
use leaderboard_rules::mapping::Mapping;

impl MappingStore for MemoryStore {
    async fn get_mapping(&self, source: &str) -> Result<Option<Mapping>, StoreError> {
        self.with(|t| {
            let versions = t
                .mappings
                .range((source.to_owned(), 0)..=(source.to_owned(), u64::MAX));
            versions.last().map(|(_, m)| m.clone())
        })
    }

    async fn get_mapping_version(
        &self,
        source: &str,
        version: u64,
    ) -> Result<Option<Mapping>, StoreError> {
        self.with(|t| t.mappings.get(&(source.to_owned(), version)).cloned())
    }

    async fn put_mapping(&self, mapping: &Mapping) -> Result<bool, StoreError> {
        self.with(|t| {
            let key = (mapping.source.clone(), mapping.version);
            if t.mappings.contains_key(&key) {
                return false;
            }
            t.mappings.insert(key, mapping.clone());
            true
        })
    }
}
