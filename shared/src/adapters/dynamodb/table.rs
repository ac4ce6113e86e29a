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
        let key = |name: &str, kind| {
            KeySchemaElement::builder()
                .attribute_name(name)
                .key_type(kind)
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
            .key_schema(key("pk", KeyType::Hash).map_err(StoreError::request)?)
            .key_schema(key("sk", KeyType::Range).map_err(StoreError::request)?)
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(RANK_INDEX)
                    .key_schema(key("pk", KeyType::Hash).map_err(StoreError::request)?)
                    .key_schema(key("rk", KeyType::Range).map_err(StoreError::request)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()
                    .map_err(StoreError::request)?,
            )
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(EXPIRY_INDEX)
                    .key_schema(key("pk", KeyType::Hash).map_err(StoreError::request)?)
                    .key_schema(key("xk", KeyType::Range).map_err(StoreError::request)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()
                    .map_err(StoreError::request)?,
            )
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(NAME_INDEX)
                    .key_schema(key("nk", KeyType::Hash).map_err(StoreError::request)?)
                    .key_schema(key("nf", KeyType::Range).map_err(StoreError::request)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()
                    .map_err(StoreError::request)?,
            )
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
