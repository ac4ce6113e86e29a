//! [`MappingStore`] over DynamoDB: every version of a source's mapping is one item
//! (`MAP#{source}`, `V{version, 10 digits}`), written once with a condition that it does
//! not exist, so two concurrent changes cannot both become the same version; the
//! current mapping is the highest version (one strongly consistent query).

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{key, mapping_partition, mapping_sk};
use leaderboard_core::store::MappingStore;
use leaderboard_core::store::StoreError;
use leaderboard_rules::mapping::Mapping;

#[derive(Serialize, Deserialize)]
struct MappingItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    mapping: Mapping,
}

fn decode(item: super::keys::Item) -> Result<Mapping, StoreError> {
    Ok(serde_dynamo::from_item::<_, MappingItem>(item)
        .map_err(StoreError::item)?
        .mapping)
}

impl MappingStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_mapping(&self, source: &str) -> Result<Option<Mapping>, StoreError> {
        let out = self
            .partition(&mapping_partition(source))
            .scan_index_forward(false)
            .consistent_read(true)
            .limit(1)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(mapping)", e))?;
        out.items
            .unwrap_or_default()
            .into_iter()
            .next()
            .map(decode)
            .transpose()
    }

    #[instrument(skip(self))]
    async fn get_mapping_version(
        &self,
        source: &str,
        version: u64,
    ) -> Result<Option<Mapping>, StoreError> {
        let item = key(mapping_partition(source), mapping_sk(version));
        self.get_item(item, "GetItem(mapping)")
            .await?
            .map(decode)
            .transpose()
    }

    #[instrument(skip_all, fields(source = %mapping.source, version = mapping.version))]
    async fn put_mapping(&self, mapping: &Mapping) -> Result<bool, StoreError> {
        let item = serde_dynamo::to_item(MappingItem {
            pk: mapping_partition(&mapping.source),
            sk: mapping_sk(mapping.version),
            kind: "mapping".into(),
            mapping: mapping.clone(),
        })
        .map_err(StoreError::item)?;
        self.put_new(item, "PutItem(mapping)").await
    }
}
