//! [`StandingStore`] over DynamoDB: a standing and its receipt written in one
//! conditional transaction, so a retry or a concurrent write never half-applies.

use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::AttributeValue;
use tracing::instrument;

use super::DynamoScoreStore;
use super::items::{ReceiptItem, StandingItem};
use super::keys::{Item, receipt_key, standing_key};
use crate::board::Standing;
use crate::error::StoreError;
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::store::{Commit, CommitOutcome, Receipt, StandingStore};

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

impl StandingStore for DynamoScoreStore {
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
