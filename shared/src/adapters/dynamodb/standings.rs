//! [`StandingStore`] over DynamoDB: a player's row (standing or tombstone, with the
//! receipts of their latest matches) written by one conditional `PutItem` on its
//! revision, so a retry or a concurrent write never half-applies (docs/cost.md).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use tracing::instrument;

use super::DynamoScoreStore;
use super::EXPIRY_INDEX;
use super::items::{KeptItems, ReceiptItem, RemovedItem, Slot, StandingItem, expiry_key};
use super::keys::{
    Item, key, member_pk_sk, receipt_key, receipts_partition, shard_partition, standing_key,
    standing_partition,
};
use super::moderation::AuditItem;
use super::tournaments::{cancellation, conflicted, failed};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{
    AttemptCount, Commit, CommitOutcome, Consistency, Receipt, Removal, Roll, Row, StandingStore,
};
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::profile::Metadata;

/// The condition that the row is still as `row` was read: absent, at its revision, or
/// (a row from before revisions) at its version without one.
fn unchanged(row: &Row) -> (&'static str, Item) {
    let n = |v: u64| AttributeValue::N(v.to_string());
    match (row.rev, row.version) {
        (Some(rev), _) => ("rev = :r", HashMap::from([(":r".to_owned(), n(rev))])),
        (None, Some(v)) => (
            "attribute_not_exists(rev) AND version = :v",
            HashMap::from([(":v".to_owned(), n(v))]),
        ),
        (None, None) => ("attribute_not_exists(pk)", Item::new()),
    }
}

/// Decodes a player's row (a standing or a tombstone) by its `kind`.
pub(super) fn slot_of(item: Item) -> Result<Option<Slot>, StoreError> {
    let kind = item.get("kind").and_then(|v| v.as_s().ok()).cloned();
    Slot::decode(kind.as_deref(), item).map_err(StoreError::item)
}

impl DynamoScoreStore {
    /// Writes the row item `item` if the row is still as `row` was read.
    async fn put_row(
        &self,
        item: Item,
        row: &Row,
        op: &'static str,
    ) -> Result<CommitOutcome, StoreError> {
        let (condition, values) = unchanged(row);
        Ok(if self.put_if(item, condition, values, op).await? {
            CommitOutcome::Committed
        } else {
            CommitOutcome::StandingChanged
        })
    }
}

impl DynamoScoreStore {
    /// Writes the row item `item` together with what must be written with it, all or
    /// nothing, in one `TransactWriteItems`: the row's put (conditional on its
    /// revision), a tournament result's attempt counted on the player's membership
    /// (conditional on the membership existing with attempts left), a correction's
    /// audit record.
    async fn commit_together(
        &self,
        item: Item,
        c: &Commit<'_>,
    ) -> Result<CommitOutcome, StoreError> {
        let (condition, values) = unchanged(c.at.row);
        let mut items = vec![self.put(item, condition, values)?];
        let mut counted_at = None;
        if let Some(attempt) = c.attempt {
            items.push(counted(&self.table, c.at.player, attempt)?);
            counted_at = Some(items.len() - 1);
        }
        if let Some(audit) = c.audit {
            let audit = serde_dynamo::to_item(AuditItem::of(audit)).map_err(StoreError::item)?;
            items.push(self.put(audit, "attribute_not_exists(pk)", Item::new())?);
        }
        let mut queued_at = None;
        if let Some(change) = c.queue {
            items.push(super::held::queue_write(self, change)?);
            queued_at = Some(items.len() - 1);
            items.extend(super::held::rejection_count(self, change)?);
        }
        let res = (self.client.transact_write_items())
            .set_transact_items(Some(items))
            .send()
            .await;
        match res {
            Ok(_) => Ok(CommitOutcome::Committed),
            Err(e) => match cancellation(&e) {
                // The row moved, or another transaction held one of the items: read again.
                // The queue item is not as read (another decision took it): read again too.
                Some(reasons)
                    if failed(&reasons, 0)
                        || conflicted(&reasons)
                        || queued_at.is_some_and(|at| failed(&reasons, at)) =>
                {
                    Ok(CommitOutcome::StandingChanged)
                }
                Some(reasons) if counted_at.is_some_and(|at| failed(&reasons, at)) => {
                    Ok(CommitOutcome::AttemptRefused)
                }
                _ => Err(StoreError::call("TransactWriteItems(result)", e)),
            },
        }
    }
}

/// A tournament result's attempt, counted on the player's membership if it exists
/// and still holds the count read.
fn counted(
    table: &str,
    player: &PlayerId,
    attempt: AttemptCount<'_>,
) -> Result<TransactWriteItem, StoreError> {
    let (pk, sk) = member_pk_sk(attempt.occurrence, player);
    let n = |v: u64| AttributeValue::N(v.to_string());
    // From the count read to the next, so the count this result leaves is known
    // exactly (the reply says it); `seen` is below the maximum, checked before.
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key(pk, sk)))
        .update_expression("SET attempts = :next")
        .condition_expression("attribute_exists(pk) AND attempts = :seen")
        .expression_attribute_values(":seen", n(u64::from(attempt.seen)))
        .expression_attribute_values(":next", n(u64::from(attempt.after())));
    Ok(TransactWriteItem::builder()
        .update(update.build().map_err(StoreError::request)?)
        .build())
}

impl StandingStore for DynamoScoreStore {
    #[instrument(skip(self, rows), fields(count = rows.len()))]
    async fn get_metadata(
        &self,
        rows: &[(LeaderboardId, PlayerId)],
    ) -> Result<Vec<Option<Metadata>>, StoreError> {
        let keys = rows.iter().map(|(lb, p)| standing_key(lb, p)).collect();
        let items = self
            .batch_get(
                keys,
                Some("pk, sk, md"),
                Consistency::Eventual,
                "BatchGetItem(metadata)",
            )
            .await?;
        let text = |item: &Item, name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        let mut found: HashMap<(String, String), Metadata> = HashMap::new();
        for item in items {
            let (Some(pk), Some(sk)) = (text(&item, "pk"), text(&item, "sk")) else {
                continue;
            };
            if let Some(md) = text(&item, "md").and_then(|t| Metadata::stored(&t)) {
                found.insert((pk, sk), md);
            }
        }
        Ok(rows
            .iter()
            .map(|(lb, p)| found.remove(&(standing_partition(lb, p), p.to_string())))
            .collect())
    }

    #[instrument(skip(self))]
    async fn get_row(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
        consistency: Consistency,
    ) -> Result<Row, StoreError> {
        let item = self
            .read_item(standing_key(lb, player), consistency, "GetItem(standing)")
            .await?;
        Ok(match item {
            Some(item) => slot_of(item)?.map(Slot::row).unwrap_or_default(),
            None => Row::default(),
        })
    }

    #[instrument(skip_all, fields(board = %r.at.board, player = %r.at.player))]
    async fn remove_standing(&self, r: &Removal<'_>) -> Result<CommitOutcome, StoreError> {
        let item = serde_dynamo::to_item(RemovedItem::of(r)).map_err(StoreError::item)?;
        self.put_row(item, r.at.row, "PutItem(removed)").await
    }

    #[instrument(skip_all, fields(board = %r.at.board, player = %r.at.player))]
    async fn roll(&self, r: &Roll<'_>) -> Result<CommitOutcome, StoreError> {
        let mut item = StandingItem::new(
            r.at.board,
            r.at.player,
            r.at.direction,
            r.standing,
            r.at.index_expire_at,
        )
        .with_buckets(Some(r.buckets));
        item.kept = KeptItems::written(r.at.row, &r.at.row.receipts, r.at.row.archived_until);
        if !r.ranked {
            item.rk = None;
        }
        self.put_row(
            serde_dynamo::to_item(item).map_err(StoreError::item)?,
            r.at.row,
            "PutItem(rolled)",
        )
        .await
    }

    #[instrument(skip(self))]
    async fn expiring(
        &self,
        lb: &LeaderboardId,
        shard: u64,
        now: i64,
        limit: u32,
    ) -> Result<Vec<PlayerId>, StoreError> {
        let out = self
            .client
            .query()
            .table_name(&self.table)
            .index_name(EXPIRY_INDEX)
            .key_condition_expression("pk = :pk AND xk <= :now")
            .expression_attribute_values(":pk", AttributeValue::S(shard_partition(lb, shard)))
            .expression_attribute_values(":now", AttributeValue::S(expiry_key(now)))
            .limit(limit as i32)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(by_expiry)", e))?;
        (out.items.unwrap_or_default().iter())
            .filter_map(|item| item.get("sk").and_then(|v| v.as_s().ok()))
            .map(|sk| PlayerId::parse(sk).map_err(|e| StoreError::call("Query(by_expiry)", e)))
            .collect()
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
            serde_dynamo::from_item::<_, ReceiptItem>(item)
                .map_err(StoreError::item)?
                .receipt(),
        ))
    }

    #[instrument(skip_all, fields(board = %c.at.board, player = %c.at.player, match_id = %c.receipt.match_id))]
    async fn commit(&self, c: &Commit<'_>) -> Result<CommitOutcome, StoreError> {
        let kept = c.at.row.keep(c.receipt.clone(), c.now_s);
        // The receipts leaving the row are stored first: a crash after this leaves them
        // both in the row and on their own, and the next write stores them again.
        for k in &kept.archived {
            let item = ReceiptItem::of(c.at.board, c.at.player, k);
            self.put_plain(item, "PutItem(receipt)").await?;
        }
        let kept_items = KeptItems::written(c.at.row, &kept.inline, kept.archived_until);
        let item = match c.standing {
            Some(standing) => {
                let mut item = StandingItem::new(
                    c.at.board,
                    c.at.player,
                    c.at.direction,
                    standing,
                    c.at.index_expire_at,
                );
                item.kept = kept_items;
                let mut item = item.with_buckets(c.buckets);
                if !c.ranked {
                    item.rk = None;
                }
                serde_dynamo::to_item(item).map_err(StoreError::item)?
            }
            None => serde_dynamo::to_item(RemovedItem::keeping(&c.at, kept_items, c.now_s))
                .map_err(StoreError::item)?,
        };
        match (c.attempt, c.audit, c.queue) {
            (None, None, None) => self.put_row(item, c.at.row, "PutItem(standing)").await,
            _ => self.commit_together(item, c).await,
        }
    }
}
