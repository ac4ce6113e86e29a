//! `DynamoScoreStore`: the source of truth in one DynamoDB table (`pk`, `sk` strings).
//!
//! | item | pk | sk |
//! |---|---|---|
//! | board | `B#{board}` | `BOARD` |
//! | board list entry (a copy of the board) | `BL` | `{game}#{mode}#{board}` (empty game/mode for standalone boards) |
//! | family | `F#{game}#{mode}` | `FAMILY` |
//! | standing | `S#{board}#{shard}` (shard = FNV-1a(player) % 16) | `{player}` |
//! | receipt | `R#{board}#{player}` | `M#{match}` (with TTL attribute `expires_at`) |
//! | rebuild checkpoint | `RB#{board}` | `REBUILD` |
//! | rank sketch (big boards) | `RS#{board}` | `SKETCH` |
//!
//! Write-sharding the standings keeps a hot board off a single partition at 10K writes/s.
//! Standings also carry `rk`, the rank-ordered sort key of [`RankKey::sort_key`]; the
//! sparse global secondary index `by_rank` (`pk`, `rk`, keys only) serves reads in rank
//! order straight from DynamoDB (see `ranked`). Every item carries `kind`, which the
//! stream projector uses to pick standings. Ids cannot contain `#` (see [`crate::ids`]),
//! so keys are unambiguous.
//!
//! Files: `keys` (every key format), `items` (standings and receipts as stored),
//! `table` (the table's definition), and one per port part: `boards` ([`BoardStore`]),
//! `standings` ([`StandingStore`]), `ranked` ([`RankedReads`]), `rebuild`
//! ([`RebuildStore`]), `sketch` ([`SketchStore`]); `changes` decodes stream records,
//! `streams` reads the table's stream again.

mod boards;
mod changes;
mod items;
mod keys;
mod ranked;
mod rebuild;
mod sketch;
mod standings;
mod streams;
mod table;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{ConditionCheck, Put, TransactWriteItem};
use serde::Serialize;

use crate::error::StoreError;
#[cfg(doc)]
use crate::order::RankKey;
#[cfg(doc)]
use crate::store::{BoardStore, RankedReads, RebuildStore, ScoreStore, SketchStore, StandingStore};
use keys::Item;

pub use changes::decode;
pub use items::StandingItem;
pub use keys::{SHARDS, list_key, shard_partition};
pub use streams::{DynamoStreams, cmp_sequence, lambda_record};

/// The TTL attribute of receipts.
pub const TTL_ATTRIBUTE: &str = "expires_at";
/// The rank-ordered index of standings.
pub const RANK_INDEX: &str = "by_rank";

/// Where the next page of a query starts: the sort key of its last evaluated item.
fn next_sort_key(out: &aws_sdk_dynamodb::operation::query::QueryOutput) -> Option<String> {
    out.last_evaluated_key()
        .and_then(|k| k.get("sk"))
        .and_then(|v| v.as_s().ok())
        .cloned()
}

/// The DynamoDB adapter of [`ScoreStore`].
#[derive(Clone)]
pub struct DynamoScoreStore {
    client: Client,
    table: String,
}

impl DynamoScoreStore {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    async fn get_item(&self, key: Item, op: &'static str) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| StoreError::sdk(op, e))?;
        Ok(out.item)
    }

    /// Writes `item` as it is (no condition: the last write wins).
    async fn put_plain<T: Serialize>(&self, item: T, op: &'static str) -> Result<(), StoreError> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(serde_dynamo::to_item(item)?))
            .send()
            .await
            .map_err(|e| StoreError::sdk(op, e))?;
        Ok(())
    }

    pub(super) fn check(
        &self,
        key: Item,
        condition: &str,
        values: Item,
    ) -> Result<TransactWriteItem, StoreError> {
        let check = ConditionCheck::builder()
            .table_name(&self.table)
            .set_key(Some(key))
            .condition_expression(condition)
            .set_expression_attribute_values((!values.is_empty()).then_some(values))
            .build()?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    pub(super) fn put(
        &self,
        item: Item,
        condition: &str,
        values: Item,
    ) -> Result<TransactWriteItem, StoreError> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition)
            .set_expression_attribute_values((!values.is_empty()).then_some(values))
            .build()?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}
