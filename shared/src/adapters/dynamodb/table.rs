//! The table as `template.yaml` declares it, created for tests and the local stack.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, StreamSpecification, StreamViewType,
    TimeToLiveSpecification,
};

use super::{DynamoScoreStore, EXPIRY_INDEX, NAME_INDEX, RANK_INDEX, TTL_ATTRIBUTE};
use leaderboard_core::store::StoreError;

impl DynamoScoreStore {
    /// Creates the table as `template.yaml` declares it (keys, the `by_rank`,
    /// `by_expiry` and `by_name` indexes, stream
    /// with both images, on-demand billing, receipt TTL). For tests.
    pub async fn create_table(&self) -> Result<(), StoreError> {
        let attr = |name: &str| {
            AttributeDefinition::builder()
                .attribute_name(name)
                .attribute_type(ScalarAttributeType::S)
                .build()
        };
        self.client
            .create_table()
            .table_name(&self.table)
            .attribute_definitions(attr("pk").map_err(StoreError::request)?)
            .attribute_definitions(attr("sk").map_err(StoreError::request)?)
            .attribute_definitions(attr("rk").map_err(StoreError::request)?)
            .attribute_definitions(attr("xk").map_err(StoreError::request)?)
            .attribute_definitions(attr("nk").map_err(StoreError::request)?)
            .attribute_definitions(attr("nf").map_err(StoreError::request)?)
            .key_schema(key("pk", KeyType::Hash)?)
            .key_schema(key("sk", KeyType::Range)?)
            .global_secondary_indexes(keys_only(RANK_INDEX, "pk", "rk")?)
            .global_secondary_indexes(keys_only(EXPIRY_INDEX, "pk", "xk")?)
            .global_secondary_indexes(keys_only(NAME_INDEX, "nk", "nf")?)
            .billing_mode(BillingMode::PayPerRequest)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewAndOldImages)
                    .build()
                    .map_err(StoreError::request)?,
            )
            .send()
            .await
            .map_err(|e| StoreError::call("CreateTable", e))?;
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name(TTL_ATTRIBUTE)
                    .build()
                    .map_err(StoreError::request)?,
            )
            .send()
            .await
            .map_err(|e| StoreError::call("UpdateTimeToLive", e))?;
        Ok(())
    }
}

/// One element of a key schema.
fn key(name: &str, kind: KeyType) -> Result<KeySchemaElement, StoreError> {
    (KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(kind))
    .build()
    .map_err(StoreError::request)
}

/// A sparse index keyed on `hash` and `range` that projects the keys only, as all three
/// of the table's are.
fn keys_only(name: &str, hash: &str, range: &str) -> Result<GlobalSecondaryIndex, StoreError> {
    GlobalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key(hash, KeyType::Hash)?)
        .key_schema(key(range, KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::KeysOnly)
                .build(),
        )
        .build()
        .map_err(StoreError::request)
}
