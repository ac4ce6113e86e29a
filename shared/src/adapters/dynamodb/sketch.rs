//! A board's rank sketch (see [`RankSketch`]): item `RS#{board}` / `SKETCH`, written by
//! the sweep for boards too big to count, read (eventually consistent: it is an estimate
//! anyway) by reads served from DynamoDB.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{key, sketch_pk_sk};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{RankSketch, SketchStore};
use leaderboard_rules::ids::LeaderboardId;

#[derive(Serialize, Deserialize)]
struct SketchItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    sketch: RankSketch,
}

fn sketch_key(lb: &LeaderboardId) -> (String, String) {
    sketch_pk_sk(lb)
}

impl SketchStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_sketch(&self, lb: &LeaderboardId) -> Result<Option<RankSketch>, StoreError> {
        let (pk, sk) = sketch_key(lb);
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .send()
            .await
            .map_err(|e| StoreError::call("GetItem(sketch)", e))?;
        Ok(match out.item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, SketchItem>(item)
                    .map_err(StoreError::item)?
                    .sketch,
            ),
            None => None,
        })
    }

    #[instrument(skip(self, sketch), fields(marks = sketch.ranks.len(), total = sketch.total))]
    async fn put_sketch(&self, lb: &LeaderboardId, sketch: &RankSketch) -> Result<(), StoreError> {
        let (pk, sk) = sketch_key(lb);
        let item = SketchItem {
            pk,
            sk,
            kind: "sketch".into(),
            sketch: sketch.clone(),
        };
        self.put_plain(item, "PutItem(sketch)").await
    }
}
