//! What a rebuild reads and writes in the table: pages of a shard's standings and the
//! per-board checkpoint that makes a rebuild resumable.

use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::keys::{SHARDS, checkpoint_pk_sk, key, shard_partition};
use super::{DynamoScoreStore, next_sort_key};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{Checkpoint, IndexEntry, RebuildStore};
use leaderboard_rules::ids::LeaderboardId;

#[derive(Debug, Serialize, Deserialize)]
struct CheckpointItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    checkpoint: Checkpoint,
}

fn checkpoint_key(lb: &LeaderboardId) -> (String, String) {
    checkpoint_pk_sk(lb)
}

impl RebuildStore for DynamoScoreStore {
    fn shard_count(&self) -> u64 {
        SHARDS
    }

    #[instrument(skip(self))]
    async fn standings_page(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        page: Paging<'_>,
    ) -> Result<(Vec<IndexEntry>, Option<String>), StoreError> {
        let pk = shard_partition(lb, shard);
        let out = (self.partition_page(&pk, page))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(standings)", e))?;
        let next = next_sort_key(&out);
        let mut entries = Vec::new();
        for item in out.items.unwrap_or_default() {
            // Standings, and the tombstones of removed ones (the index keeps them).
            if let Some(slot) = super::standings::slot_of(item)? {
                entries.push(slot.index_entry());
            }
        }
        Ok((entries, next))
    }

    #[instrument(skip(self))]
    async fn get_checkpoint(&self, lb: &LeaderboardId) -> Result<Option<Checkpoint>, StoreError> {
        let (pk, sk) = checkpoint_key(lb);
        let item = self.get_item(key(pk, sk), "GetItem(checkpoint)").await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, CheckpointItem>(item)
                    .map_err(StoreError::item)?
                    .checkpoint,
            ),
            None => None,
        })
    }

    #[instrument(skip(self, checkpoint))]
    async fn put_checkpoint(
        &self,
        lb: &LeaderboardId,
        checkpoint: &Checkpoint,
    ) -> Result<(), StoreError> {
        let (pk, sk) = checkpoint_key(lb);
        let item = CheckpointItem {
            pk,
            sk,
            kind: "checkpoint".into(),
            checkpoint: checkpoint.clone(),
        };
        self.put_plain(item, "PutItem(checkpoint)").await
    }

    #[instrument(skip(self))]
    async fn delete_checkpoint(&self, lb: &LeaderboardId) -> Result<(), StoreError> {
        let (pk, sk) = checkpoint_key(lb);
        self.delete_item(key(pk, sk), "DeleteItem(checkpoint)")
            .await?;
        Ok(())
    }
}
