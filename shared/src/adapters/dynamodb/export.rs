//! [`ExportStore`] over DynamoDB: each export of a board at `EXP#{board}`, `{id}` (the
//! audit record's id, so a board's exports list newest first from one query), claimed
//! and kept with conditional writes on its `owner`, as a seal's progress is.

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{export_partition, key};
use leaderboard_core::store::{ExportJob, ExportStore, StoreError};
use leaderboard_rules::ids::LeaderboardId;

#[derive(Serialize, Deserialize)]
struct ExportItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    job: ExportJob,
}

fn item(job: &ExportJob) -> Result<super::keys::Item, StoreError> {
    serde_dynamo::to_item(ExportItem {
        pk: export_partition(&job.leaderboard_id),
        sk: job.id.clone(),
        kind: "export".into(),
        job: job.clone(),
    })
    .map_err(StoreError::item)
}

fn job(item: super::keys::Item) -> Result<ExportJob, StoreError> {
    Ok(serde_dynamo::from_item::<_, ExportItem>(item)
        .map_err(StoreError::item)?
        .job)
}

impl ExportStore for DynamoScoreStore {
    #[instrument(skip_all, fields(export = %job.id))]
    async fn put_export(&self, job: &ExportJob) -> Result<(), StoreError> {
        // A new id each time: a taken key is the same request again.
        self.put_new(item(job)?, "PutItem(export)").await?;
        Ok(())
    }

    #[instrument(skip(self))]
    async fn get_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
    ) -> Result<Option<ExportJob>, StoreError> {
        let found = self
            .get_item(key(export_partition(lb), id.to_owned()), "GetItem(export)")
            .await?;
        found.map(job).transpose()
    }

    #[instrument(skip(self))]
    async fn list_exports(
        &self,
        lb: &LeaderboardId,
        limit: u32,
    ) -> Result<Vec<ExportJob>, StoreError> {
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", AttributeValue::S(export_partition(lb)))
            .scan_index_forward(false)
            .limit(limit as i32)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(exports)", e))?;
        out.items.unwrap_or_default().into_iter().map(job).collect()
    }

    #[instrument(skip(self))]
    async fn claim_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<Option<ExportJob>, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(export_partition(lb), id.to_owned())))
            .update_expression("SET #owner = :o, #lease = :l")
            .condition_expression("#status = :running AND #lease < :now")
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_names("#lease", "lease_until")
            .expression_attribute_names("#status", "status")
            .expression_attribute_values(":o", AttributeValue::S(owner.to_owned()))
            .expression_attribute_values(":l", AttributeValue::N(lease_until.to_string()))
            .expression_attribute_values(":now", AttributeValue::N(now.to_string()))
            .expression_attribute_values(":running", AttributeValue::S("RUNNING".into()))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match res {
            Ok(out) => Ok(Some(job(out.attributes.unwrap_or_default())?)),
            // Done, held by another run, or no such export (the condition fails on an
            // absent item as well).
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(None)
            }
            Err(e) => Err(StoreError::call("UpdateItem(claim export)", e)),
        }
    }

    #[instrument(skip_all, fields(export = %job.id, rows = job.rows))]
    async fn save_export(&self, job: &ExportJob) -> Result<bool, StoreError> {
        self.put_if_owner(item(job)?, &job.owner, "PutItem(export)")
            .await
    }
}
