//! A board's rank sketch (see [`RankSketch`]): item `RS#{board}` / `SKETCH`, written by
//! the sweep for boards too big to count, read (eventually consistent: it is an estimate
//! anyway) by reads served from DynamoDB.

use serde::{Deserialize, Serialize};

use super::{DynamoScoreStore, key};
use crate::error::StoreError;
use crate::ids::LeaderboardId;
use crate::store::RankSketch;

#[derive(Serialize, Deserialize)]
struct SketchItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    sketch: RankSketch,
}

fn sketch_key(lb: &LeaderboardId) -> (String, String) {
    (format!("RS#{lb}"), "SKETCH".to_owned())
}

impl DynamoScoreStore {
    pub(super) async fn sketch(
        &self,
        lb: &LeaderboardId,
    ) -> Result<Option<RankSketch>, StoreError> {
        let (pk, sk) = sketch_key(lb);
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .send()
            .await
            .map_err(|e| StoreError::sdk("GetItem(sketch)", e))?;
        Ok(match out.item {
            Some(item) => Some(serde_dynamo::from_item::<_, SketchItem>(item)?.sketch),
            None => None,
        })
    }

    pub(super) async fn save_sketch(
        &self,
        lb: &LeaderboardId,
        sketch: &RankSketch,
    ) -> Result<(), StoreError> {
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
