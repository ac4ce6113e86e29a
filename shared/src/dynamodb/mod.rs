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

mod boards;
mod ranked;
mod rebuild;
mod sketch;
mod streams;

use std::collections::HashMap;

use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, ConditionCheck, GlobalSecondaryIndex,
    KeySchemaElement, KeyType, Projection, ProjectionType, Put, ScalarAttributeType,
    StreamSpecification, StreamViewType, TimeToLiveSpecification, TransactWriteItem,
};
use serde::{Deserialize, Serialize};
use tracing::instrument;

use crate::board::{Board, BoardStatus, Standing};
use crate::error::StoreError;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::score::Score;
use crate::store::{
    BoardPage, Checkpoint, Commit, CommitOutcome, Count, IndexEntry, RankSketch, Receipt,
    ScoreStore,
};
use crate::window::Family;

pub use boards::list_key;
pub use streams::{DynamoStreams, cmp_sequence, lambda_record};

/// Number of write shards per board.
pub const SHARDS: u64 = 16;
/// The TTL attribute of receipts.
pub const TTL_ATTRIBUTE: &str = "expires_at";
/// The rank-ordered index of standings.
pub const RANK_INDEX: &str = "by_rank";

type Item = HashMap<String, AttributeValue>;

/// FNV-1a: a stable hash, so a player's shard never changes between releases.
fn shard_of(player: &str) -> u64 {
    let hash = player.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % SHARDS
}

/// Where the next page of a query starts: the sort key of its last evaluated item.
fn next_sort_key(out: &aws_sdk_dynamodb::operation::query::QueryOutput) -> Option<String> {
    out.last_evaluated_key()
        .and_then(|k| k.get("sk"))
        .and_then(|v| v.as_s().ok())
        .cloned()
}

fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        ("pk".into(), AttributeValue::S(pk)),
        ("sk".into(), AttributeValue::S(sk)),
    ])
}

fn board_key(lb: &LeaderboardId) -> Item {
    key(format!("B#{lb}"), "BOARD".into())
}

/// The partition of a player's standing on a board: `S#{board}#{shard}`.
fn standing_partition(lb: &LeaderboardId, player: &PlayerId) -> String {
    format!("S#{lb}#{:02}", shard_of(player.as_str()))
}

fn standing_key(lb: &LeaderboardId, player: &PlayerId) -> Item {
    key(standing_partition(lb, player), player.to_string())
}

fn receipt_key(lb: &LeaderboardId, player: &PlayerId, m: &MatchId) -> Item {
    key(format!("R#{lb}#{player}"), format!("M#{m}"))
}

/// A standing as stored, and as the stream delivers it to the projector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingItem {
    pub pk: String,
    pub sk: String,
    pub kind: String,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub direction: Direction,
    pub score: Score,
    pub reached_at: i64,
    pub version: u64,
    pub last_match_id: MatchId,
    /// The rank-ordered sort key (`by_rank` index).
    pub rk: String,
    /// Epoch seconds at which the board's Redis keys expire, for a time window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_expire_at: Option<i64>,
}

impl StandingItem {
    pub const KIND: &'static str = "standing";

    /// The stored item of `player`'s standing `s` on `board`.
    pub fn new(
        board: &LeaderboardId,
        player: &PlayerId,
        direction: Direction,
        s: &Standing,
        index_expire_at: Option<i64>,
    ) -> Self {
        let rank_key = RankKey {
            score: s.score,
            reached_at: s.reached_at,
            player: player.to_string(),
        };
        Self {
            pk: standing_partition(board, player),
            sk: player.to_string(),
            kind: Self::KIND.into(),
            leaderboard_id: board.clone(),
            player_id: player.clone(),
            direction,
            score: s.score,
            reached_at: s.reached_at,
            version: s.version,
            last_match_id: s.last_match_id.clone(),
            rk: rank_key.sort_key(direction),
            index_expire_at,
        }
    }

    /// The index entry this row projects to.
    pub fn index_entry(&self) -> IndexEntry {
        IndexEntry {
            board: self.leaderboard_id.clone(),
            direction: self.direction,
            key: RankKey {
                score: self.score,
                reached_at: self.reached_at,
                player: self.player_id.to_string(),
            },
            version: self.version,
            expire_at: self.index_expire_at,
        }
    }

    fn standing(self) -> Standing {
        Standing {
            score: self.score,
            reached_at: self.reached_at,
            version: self.version,
            last_match_id: self.last_match_id,
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct ReceiptItem {
    pk: String,
    sk: String,
    kind: String,
    submitted: Score,
    score: Score,
    previous_score: Option<Score>,
    update_applied: bool,
    updated_at: i64,
    last_match_id: MatchId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    previous_rank: Option<u64>,
    expires_at: i64,
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

    /// Creates the table as `template.yaml` declares it (keys, the `by_rank` index, stream
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

    fn check(
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

    fn put(
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

/// The condition that the standing still has `expected` (or still does not exist).
fn version_condition(expected: Option<u64>) -> (&'static str, Item) {
    match expected {
        None => ("attribute_not_exists(pk)", Item::new()),
        Some(v) => (
            "version = :v",
            HashMap::from([(":v".to_owned(), AttributeValue::N(v.to_string()))]),
        ),
    }
}

impl ScoreStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_board(&self, lb: &LeaderboardId) -> Result<Option<Board>, StoreError> {
        self.board(lb).await
    }

    #[instrument(skip(self), fields(board = %board.leaderboard_id))]
    async fn create_board(&self, board: &Board) -> Result<Option<Board>, StoreError> {
        self.insert_board(board).await
    }

    #[instrument(skip(self))]
    async fn set_status(
        &self,
        lb: &LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    ) -> Result<bool, StoreError> {
        self.change_status(lb, from, to).await
    }

    #[instrument(skip(self))]
    async fn list_boards(
        &self,
        prefix: &str,
        after: Option<&str>,
        limit: u32,
    ) -> Result<BoardPage, StoreError> {
        self.boards_page(prefix, after, limit).await
    }

    #[instrument(skip(self))]
    async fn get_family(&self, game: &str, mode: &str) -> Result<Option<Family>, StoreError> {
        self.family(game, mode).await
    }

    #[instrument(skip(self), fields(game = %family.game, mode = %family.mode))]
    async fn create_family(&self, family: &Family) -> Result<Option<Family>, StoreError> {
        self.insert_family(family).await
    }

    #[instrument(skip(self))]
    async fn ranked_after(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.nearest(lb, dir, after, ranked::Side::After, limit)
            .await
    }

    #[instrument(skip(self))]
    async fn ranked_before(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        before: &RankKey,
        limit: u64,
    ) -> Result<Vec<RankKey>, StoreError> {
        self.before(lb, dir, before, limit).await
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, StoreError> {
        self.batch_keys(lb, players).await
    }

    fn shard_count(&self) -> u64 {
        SHARDS
    }

    #[instrument(skip(self))]
    async fn standings_page(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        after: Option<&str>,
        limit: u32,
    ) -> Result<(Vec<IndexEntry>, Option<String>), StoreError> {
        self.shard_page(lb, shard, after, limit).await
    }

    #[instrument(skip(self))]
    async fn get_checkpoint(&self, lb: &LeaderboardId) -> Result<Option<Checkpoint>, StoreError> {
        self.checkpoint(lb).await
    }

    #[instrument(skip(self, checkpoint))]
    async fn put_checkpoint(
        &self,
        lb: &LeaderboardId,
        checkpoint: &Checkpoint,
    ) -> Result<(), StoreError> {
        self.save_checkpoint(lb, checkpoint).await
    }

    #[instrument(skip(self))]
    async fn delete_checkpoint(&self, lb: &LeaderboardId) -> Result<(), StoreError> {
        self.drop_checkpoint(lb).await
    }

    #[instrument(skip(self))]
    async fn count_before(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        before: Option<&RankKey>,
        cap: u64,
    ) -> Result<Count, StoreError> {
        self.count(lb, dir, before, cap).await
    }

    #[instrument(skip(self))]
    async fn get_sketch(&self, lb: &LeaderboardId) -> Result<Option<RankSketch>, StoreError> {
        self.sketch(lb).await
    }

    #[instrument(skip(self, sketch), fields(marks = sketch.ranks.len(), total = sketch.total))]
    async fn put_sketch(&self, lb: &LeaderboardId, sketch: &RankSketch) -> Result<(), StoreError> {
        self.save_sketch(lb, sketch).await
    }

    #[instrument(skip(self))]
    async fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<Option<Standing>, StoreError> {
        let item = self
            .get_item(standing_key(lb, player), "GetItem(standing)")
            .await?;
        Ok(match item {
            Some(item) => Some(serde_dynamo::from_item::<_, StandingItem>(item)?.standing()),
            None => None,
        })
    }

    #[instrument(skip(self))]
    async fn get_receipt(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        match_id: &MatchId,
    ) -> Result<Option<Receipt>, StoreError> {
        let item = self
            .get_item(receipt_key(lb, player, match_id), "GetItem(receipt)")
            .await?;
        let Some(item) = item else { return Ok(None) };
        let r: ReceiptItem = serde_dynamo::from_item(item)?;
        Ok(Some(Receipt {
            submitted: r.submitted,
            score: r.score,
            previous_score: r.previous_score,
            update_applied: r.update_applied,
            updated_at: r.updated_at,
            last_match_id: r.last_match_id,
            previous_rank: r.previous_rank,
        }))
    }

    #[instrument(skip_all, fields(board = %c.board, player = %c.player, match_id = %c.match_id))]
    async fn commit(&self, c: &Commit<'_>) -> Result<CommitOutcome, StoreError> {
        let r = c.receipt;
        let receipt = ReceiptItem {
            pk: format!("R#{}#{}", c.board, c.player),
            sk: format!("M#{}", c.match_id),
            kind: "receipt".into(),
            submitted: r.submitted,
            score: r.score,
            previous_score: r.previous_score,
            update_applied: r.update_applied,
            updated_at: r.updated_at,
            last_match_id: r.last_match_id.clone(),
            previous_rank: r.previous_rank,
            expires_at: c.receipt_expires_at,
        };
        let receipt_put = self.put(
            serde_dynamo::to_item(receipt)?,
            "attribute_not_exists(pk)",
            Item::new(),
        )?;
        let (condition, values) = version_condition(c.expected_version);
        // The standing goes last: a cancelled transaction never half-writes it.
        let standing_op = match c.standing {
            Some(s) => {
                let item = StandingItem::new(c.board, c.player, c.direction, s, c.index_expire_at);
                self.put(serde_dynamo::to_item(item)?, condition, values)?
            }
            None => self.check(standing_key(c.board, c.player), condition, values)?,
        };
        let res = self
            .client
            .transact_write_items()
            .transact_items(receipt_put)
            .transact_items(standing_op)
            .send()
            .await;
        match res {
            Ok(_) => Ok(CommitOutcome::Committed),
            Err(SdkError::ServiceError(err)) => match err.err() {
                TransactWriteItemsError::TransactionCanceledException(tc) => {
                    let failed = |i: usize| {
                        tc.cancellation_reasons()
                            .get(i)
                            .and_then(|r| r.code())
                            .is_some_and(|code| code == "ConditionalCheckFailed")
                    };
                    Ok(if failed(0) {
                        CommitOutcome::ReceiptExists
                    } else {
                        // The version moved, or (real DynamoDB) a concurrent transaction
                        // on the same items cancelled this one: `TransactionConflict`.
                        CommitOutcome::StandingChanged
                    })
                }
                _ => Err(StoreError::sdk(
                    "TransactWriteItems",
                    SdkError::ServiceError(err),
                )),
            },
            Err(e) => Err(StoreError::sdk("TransactWriteItems", e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_stable_and_spread() {
        assert_eq!(shard_of("alice"), shard_of("alice"));
        let used: std::collections::HashSet<u64> =
            (0..1000).map(|i| shard_of(&format!("p{i}"))).collect();
        assert_eq!(used.len() as u64, SHARDS);
    }

    #[test]
    fn policies_keep_their_stored_names() {
        assert_eq!(
            serde_json::to_string(&crate::board::Policy::Min).unwrap(),
            "\"MIN\""
        );
    }
}
