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
//! | removed standing (tombstone, kind `removed`) | `S#{board}#{shard}` | `{player}` |
//! | ban | `BAN#{game}` | `{player}` |
//! | ban, under its player (for an erasure) | `PB#{player}` | `{game}` |
//! | audit record | `AU` | `{at, 13 digits}-{random}` |
//! | sealing progress (lease, place in the walk) | `SEAL#{board}` | `SEAL` |
//! | sealed results (top 1,000, total) | `RES#{board}` | `RESULTS` |
//! | an export of a board (lease, parts uploaded, place in the walk) | `EXP#{board}` | `{export id}` |
//! | a player's final place in a sealed window | `H#{player}` | `{game}#{mode}#{scope}#{PERIOD}#{end, 13 digits}` |
//! | a player's profile (an erased one keeps only its version) | `P#{player}` | `PROFILE` |
//! | a player's reward from a sealed window (TTL a month past its expiry) | `RW#{player}` | `{window's board}` |
//! | an event source's schema mapping, one item per version | `MAP#{source}` | `V{version, 10 digits}` |
//! | a tournament's definition | `TD` | `{tournament}` |
//! | a seat of a tournament occurrence | `TS#{occurrence board}#{seat % 16}` | `{seat, 20 digits}` |
//! | a player's membership of an occurrence (seat, cohort, attempts) | `TJ#{occurrence board}#{shard}` | `{player}` |
//! | an occurrence's seat counter (joins while Redis is away) | `TC#{occurrence board}` | `COUNTER` |
//!
//! Write-sharding the standings keeps a hot board off a single partition at 10K writes/s.
//! Standings also carry `rk`, the rank-ordered sort key of [`RankKey::sort_key`] (on
//! boards that keep a rank order here, `Board::rank_index`); the sparse global secondary
//! index `by_rank` (`pk`, `rk`, keys only) serves reads in rank order straight from
//! DynamoDB (see `ranked`). Every item carries `kind`, which the stream projector uses
//! to pick standings. Ids cannot contain `#` (see [`leaderboard_rules::ids`]), so keys
//! are unambiguous. Files: `keys` (every key format), `items` (standings and receipts
//! as stored), `table` (the table's definition), one per port part (`boards`,
//! `standings`, `ranked`, `rebuild`, `sketch`, `moderation`, `seal`, `export`,
//! `mappings`, `profiles`, `rewards`, `tournaments`); `changes` decodes stream records,
//! `streams` reads the table's stream again.

mod boards;
mod changes;
mod export;
mod held;
mod items;
mod keys;
mod mappings;
mod moderation;
mod profiles;
mod ranked;
mod rebuild;
mod rewards;
mod seal;
mod sketch;
mod standings;
mod streams;
mod table;
mod tournaments;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::types::{
    AttributeValue, DeleteRequest, KeysAndAttributes, Put, PutRequest, ReturnValue,
    TransactWriteItem, WriteRequest,
};
use futures::{StreamExt, TryStreamExt};
use serde::Serialize;

use keys::Item;
use leaderboard_core::store::Consistency;
#[cfg(doc)]
use leaderboard_core::store::ScoreStore;
use leaderboard_core::store::StoreError;
#[cfg(doc)]
use leaderboard_rules::order::RankKey;
use leaderboard_rules::page::Paging;

pub use changes::decode;
pub use items::StandingItem;
pub use keys::{SHARDS, shard_partition};
pub use streams::{DynamoStreams, cmp_sequence, lambda_record};

/// The TTL attribute of receipts.
pub(crate) const TTL_ATTRIBUTE: &str = "expires_at";
/// The rank-ordered index of standings.
pub(crate) const RANK_INDEX: &str = "by_rank";
/// The sparse index of rolling boards' rows by when their first bucket leaves
/// (`pk` = the row's shard partition, `xk` = that time; keys only).
pub(crate) const EXPIRY_INDEX: &str = "by_expiry";
/// The sparse index of profiles by name (`nk` = `N#` and the first character of the name's
/// search key, `nf` = the player's name entry; keys only): docs/console.md's name search.
pub(crate) const NAME_INDEX: &str = "by_name";
/// BatchWriteItem calls one bulk write keeps in flight.
const BATCHES_IN_FLIGHT: usize = 16;

/// One page of `query` (`what` names errors): its items as `T`, and where the next starts.
async fn page_of<T: serde::de::DeserializeOwned>(
    query: aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder,
    what: &'static str,
) -> Result<(Vec<T>, Option<String>), StoreError> {
    let out = query.send().await.map_err(|e| StoreError::call(what, e))?;
    let next = next_sort_key(&out);
    let items = (out.items.unwrap_or_default().into_iter())
        .map(serde_dynamo::from_item)
        .collect::<Result<_, _>>()
        .map_err(StoreError::item)?;
    Ok((items, next))
}

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
        self.read_item(key, Consistency::Strong, op).await
    }

    async fn read_item(
        &self,
        key: Item,
        consistency: Consistency,
        op: &'static str,
    ) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .consistent_read(consistency == Consistency::Strong)
            .send()
            .await
            .map_err(|e| StoreError::call(op, e))?;
        Ok(out.item)
    }

    /// Deletes the item at `key` (nothing if there is none); returns what it held.
    async fn delete_item(&self, key: Item, op: &'static str) -> Result<Option<Item>, StoreError> {
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(key))
            .return_values(ReturnValue::AllOld)
            .send()
            .await
            .map_err(|e| StoreError::call(op, e))?;
        Ok(out.attributes)
    }

    /// Writes `item` as it is (no condition: the last write wins).
    async fn put_plain<T: Serialize>(&self, item: T, op: &'static str) -> Result<(), StoreError> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(serde_dynamo::to_item(item).map_err(StoreError::item)?))
            .send()
            .await
            .map_err(|e| StoreError::call(op, e))?;
        Ok(())
    }

    /// A query of partition `pk` (`pk = :pk`), to which callers add their conditions.
    pub(super) fn partition(
        &self,
        pk: &str,
    ) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
        self.client
            .query()
            .table_name(&self.table)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", AttributeValue::S(pk.to_owned()))
    }

    /// One page of a partition in sort-key order, strictly after the sort key `page.after`.
    pub(super) fn partition_page(
        &self,
        pk: &str,
        page: Paging<'_>,
    ) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
        let start = page.after.map(|sk| keys::key(pk.to_owned(), sk.to_owned()));
        (self.partition(pk))
            .set_exclusive_start_key(start)
            .limit(page.limit as i32)
    }

    /// Deletes every item of partition `pk` (a page of keys at a time, 25 per batch,
    /// retrying what DynamoDB leaves unprocessed); returns how many there were.
    pub(super) async fn delete_partition(&self, pk: &str, what: &str) -> Result<u64, StoreError> {
        let mut deleted = 0;
        loop {
            let out = self
                .partition(pk)
                .projection_expression("pk, sk")
                .consistent_read(true)
                .limit(500)
                .send()
                .await
                .map_err(|e| StoreError::call("Query(delete_partition)", e))?;
            let keys = out.items.unwrap_or_default();
            if keys.is_empty() {
                return Ok(deleted);
            }
            deleted += keys.len() as u64;
            self.delete_keys(keys).await?;
            tracing::debug!(pk, what, deleted, "deleted a page");
        }
    }

    /// Deletes the items of `keys`, 25 per batch.
    pub(super) async fn delete_keys(&self, keys: Vec<Item>) -> Result<(), StoreError> {
        let requests = keys
            .into_iter()
            .map(|k| {
                let delete = DeleteRequest::builder()
                    .set_key(Some(k))
                    .build()
                    .map_err(StoreError::request)?;
                Ok(WriteRequest::builder().delete_request(delete).build())
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.write_batches(requests, "BatchWriteItem(delete)").await
    }

    /// The items of `keys` that exist (any order), 100 keys a BatchGetItem, read again
    /// for what DynamoDB leaves unprocessed; `projection` names the attributes to read
    /// (all if `None`).
    pub(super) async fn batch_get(
        &self,
        keys: Vec<Item>,
        projection: Option<&str>,
        consistency: Consistency,
        op: &'static str,
    ) -> Result<Vec<Item>, StoreError> {
        let mut found = Vec::with_capacity(keys.len());
        // (No keys is no call: DynamoDB refuses an empty request.)
        for chunk in keys.chunks(100) {
            let mut pending = Some(
                KeysAndAttributes::builder()
                    .set_keys(Some(chunk.to_vec()))
                    .set_projection_expression(projection.map(str::to_owned))
                    .consistent_read(consistency == Consistency::Strong)
                    .build()
                    .map_err(StoreError::request)?,
            );
            while let Some(keys) = pending.take() {
                let out = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, keys)
                    .send()
                    .await
                    .map_err(|e| StoreError::call(op, e))?;
                found.extend(
                    out.responses
                        .and_then(|mut r| r.remove(&self.table))
                        .unwrap_or_default(),
                );
                pending = out
                    .unprocessed_keys
                    .and_then(|mut u| u.remove(&self.table))
                    .filter(|k| !k.keys().is_empty());
            }
        }
        Ok(found)
    }

    pub(super) async fn put_items(&self, items: Vec<Item>) -> Result<(), StoreError> {
        let requests = items
            .into_iter()
            .map(|item| {
                let put = PutRequest::builder()
                    .set_item(Some(item))
                    .build()
                    .map_err(StoreError::request)?;
                Ok(WriteRequest::builder().put_request(put).build())
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        self.write_batches(requests, "BatchWriteItem(put)").await
    }

    /// Writes in batches of 25 (up to [`BATCHES_IN_FLIGHT`] at once), retrying what
    /// DynamoDB leaves unprocessed.
    async fn write_batches(
        &self,
        all: Vec<WriteRequest>,
        op: &'static str,
    ) -> Result<(), StoreError> {
        let chunks: Vec<Vec<WriteRequest>> = all.chunks(25).map(<[_]>::to_vec).collect();
        futures::stream::iter(chunks)
            .map(|chunk| self.write_batch(chunk, op))
            .buffer_unordered(BATCHES_IN_FLIGHT)
            .try_collect::<Vec<()>>()
            .await?;
        Ok(())
    }

    async fn write_batch(
        &self,
        mut requests: Vec<WriteRequest>,
        op: &'static str,
    ) -> Result<(), StoreError> {
        for attempt in 0..20_u32 {
            let out = self
                .client
                .batch_write_item()
                .request_items(&self.table, requests)
                .send()
                .await
                .map_err(|e| StoreError::call(op, e))?;
            requests = out
                .unprocessed_items
                .and_then(|mut u| u.remove(&self.table))
                .unwrap_or_default();
            if requests.is_empty() {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(10 << attempt.min(6))).await;
        }
        Err(StoreError::call(
            op,
            std::io::Error::other("items left unprocessed after retries"),
        ))
    }

    /// Puts `item` unless an item with its key exists: true if written, false if the key
    /// was taken (nothing written).
    pub(super) async fn put_new(&self, item: Item, op: &'static str) -> Result<bool, StoreError> {
        self.put_if(item, "attribute_not_exists(pk)", Item::new(), op)
            .await
    }

    /// Puts `item` if `condition` holds: true if written, false if it did not hold
    /// (nothing written).
    pub(super) async fn put_if(
        &self,
        item: Item,
        condition: &str,
        values: Item,
        op: &'static str,
    ) -> Result<bool, StoreError> {
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition)
            .set_expression_attribute_values((!values.is_empty()).then_some(values))
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(StoreError::call(op, e)),
        }
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
            .build()
            .map_err(StoreError::request)?;
        Ok(TransactWriteItem::builder().put(put).build())
    }
}
