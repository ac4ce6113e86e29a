//! [`StandingStore`] over DynamoDB: a standing and its receipt written in one
//! conditional transaction, so a retry or a concurrent write never half-applies.

use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::AttributeValue;
use tracing::instrument;

use super::DynamoScoreStore;
use super::items::{ReceiptItem, RemovedItem, Slot, StandingItem};
use super::keys::{Item, ban_pk_sk, key, receipt_key, receipts_partition, standing_key};
use crate::board::Standing;
use crate::error::StoreError;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::store::{Commit, CommitOutcome, Receipt, Removal, Row, StandingStore};

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

/// Decodes a player's row (a standing or a tombstone) by its `kind`.
pub(super) fn slot_of(item: Item) -> Result<Option<Slot>, StoreError> {
    let kind = item.get("kind").and_then(|v| v.as_s().ok()).cloned();
    Ok(Slot::decode(kind.as_deref(), item)?)
}

impl StandingStore for DynamoScoreStore {
    async fn get_standing(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<Option<Standing>, StoreError> {
        Ok(self.get_row(lb, player).await?.standing)
    }

    #[instrument(skip(self))]
    async fn get_row(&self, lb: &LeaderboardId, player: &PlayerId) -> Result<Row, StoreError> {
        let item = self
            .get_item(standing_key(lb, player), "GetItem(standing)")
            .await?;
        Ok(match item {
            Some(item) => slot_of(item)?.map(Slot::row).unwrap_or_default(),
            None => Row::default(),
        })
    }

    #[instrument(skip_all, fields(board = %r.board, player = %r.player))]
    async fn remove_standing(&self, r: &Removal<'_>) -> Result<CommitOutcome, StoreError> {
        let (condition, values) = version_condition(Some(r.expected_version));
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(serde_dynamo::to_item(RemovedItem::of(r))?))
            .condition_expression(condition)
            .set_expression_attribute_values(Some(values))
            .send()
            .await;
        match res {
            Ok(_) => Ok(CommitOutcome::Committed),
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(CommitOutcome::StandingChanged)
            }
            Err(e) => Err(StoreError::sdk("PutItem(removed)", e)),
        }
    }

    #[instrument(skip(self))]
    async fn erase_player(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<Option<u64>, StoreError> {
        self.delete_partition(&receipts_partition(lb, player), "receipts")
            .await?;
        let old = self
            .delete_item(standing_key(lb, player), "DeleteItem(standing)")
            .await?;
        Ok(match old {
            Some(item) => slot_of(item)?.map(|s| s.version()),
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
        Ok(Some(
            serde_dynamo::from_item::<_, ReceiptItem>(item)?.receipt(),
        ))
    }

    #[instrument(skip_all, fields(board = %c.board, player = %c.player, match_id = %c.match_id))]
    async fn commit(&self, c: &Commit<'_>) -> Result<CommitOutcome, StoreError> {
        let receipt = ReceiptItem::of(c);
        let receipt_put = self.put(
            serde_dynamo::to_item(receipt)?,
            "attribute_not_exists(pk)",
            Item::new(),
        )?;
        let (condition, values) = version_condition(c.expected_version);
        let ban_check = c
            .game
            .map(|game| {
                let (pk, sk) = ban_pk_sk(game, c.player);
                self.check(key(pk, sk), "attribute_not_exists(pk)", Item::new())
            })
            .transpose()?;
        // The standing goes last: a cancelled transaction never half-writes it.
        let standing_op = match c.standing {
            Some(s) => {
                let item = StandingItem::new(c.board, c.player, c.direction, s, c.index_expire_at);
                self.put(serde_dynamo::to_item(item)?, condition, values)?
            }
            None => self.check(standing_key(c.board, c.player), condition, values)?,
        };
        let banned_at = ban_check.is_some().then_some(1);
        let mut ops = vec![receipt_put];
        ops.extend(ban_check);
        ops.push(standing_op);
        let res = self
            .client
            .transact_write_items()
            .set_transact_items(Some(ops))
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
                    } else if banned_at.is_some_and(failed) {
                        CommitOutcome::Banned
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
