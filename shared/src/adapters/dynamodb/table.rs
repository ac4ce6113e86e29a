//! The table as `template.yaml` declares it, created for tests and the local stack.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, StreamSpecification, StreamViewType,
    TimeToLiveSpecification,
};

use super::{DynamoScoreStore, EXPIRY_INDEX, NAME_INDEX, RANK_INDEX, TTL_ATTRIBUTE};
use crate::store::StoreError;

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
            .attribute_definitions(attr("pk")?)
            .attribute_definitions(attr("sk")?)
            .attribute_definitions(attr("rk")?)
            .attribute_definitions(attr("xk")?)
            .attribute_definitions(attr("nk")?)
            .attribute_definitions(attr("nf")?)
            .key_schema(key("pk", KeyType::Hash)?)
            .key_schema(key("sk", KeyType::Range)?)
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(RANK_INDEX)
                    .key_schema(key("pk", KeyType::Hash)?)
                    .key_schema(key("rk", KeyType::Range)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()?,
            )
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(EXPIRY_INDEX)
                    .key_schema(key("pk", KeyType::Hash)?)
                    .key_schema(key("xk", KeyType::Range)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()?,
            )
            .global_secondary_indexes(
                GlobalSecondaryIndex::builder()
                    .index_name(NAME_INDEX)
                    .key_schema(key("nk", KeyType::Hash)?)
                    .key_schema(key("nf", KeyType::Range)?)
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()?,
            )
            .billing_mode(BillingMode::PayPerRequest)
            .stream_specification(
                StreamSpecification::builder()
                    .stream_enabled(true)
                    .stream_view_type(StreamViewType::NewAndOldImages)
                    .build()?,
            )
            .send()
            .await
            .map_err(|e| StoreError::sdk("CreateTable", e))?;
        self.client
            .update_time_to_live()
            .table_name(&self.table)
            .time_to_live_specification(
                TimeToLiveSpecification::builder()
                    .enabled(true)
                    .attribute_name(TTL_ATTRIBUTE)
                    .build()?,
            )
            .send()
            .await
            .map_err(|e| StoreError::sdk("UpdateTimeToLive", e))?;
        Ok(())
    }
}
