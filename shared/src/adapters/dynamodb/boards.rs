//! Boards, the board list and families in the table.

use leaderboard_rules::page::Paging;
use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::keys::{FAMILY_LIST_PK, Item, LIST_PK, board_key, family_pk_sk, key};
use super::tournaments::{cancellation, failed};
use super::{DynamoScoreStore, page_of};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{BoardPage, BoardStore, FamilyPage};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::integrity::Integrity;
use leaderboard_rules::reset::BoardReset;
use leaderboard_rules::reward::RewardTable;

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct BoardItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    pub(super) board: Board,
}

#[derive(Debug, Serialize, Deserialize)]
struct FamilyItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    family: Family,
}

fn family_key(game: &str, mode: &str) -> Item {
    let (pk, sk) = family_pk_sk(game, mode);
    key(pk, sk)
}

fn cancelled_first(err: &SdkError<TransactWriteItemsError>) -> bool {
    cancellation(err).is_some_and(|reasons| failed(&reasons, 0))
}

impl BoardStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_board(&self, lb: &LeaderboardId) -> Result<Option<Board>, StoreError> {
        let item = self.get_item(board_key(lb), "GetItem(board)").await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, BoardItem>(item)
                    .map_err(StoreError::item)?
                    .board,
            ),
            None => None,
        })
    }

    /// The board item and its list entry, in one transaction, if the board is new.
    #[instrument(skip(self), fields(board = %board.leaderboard_id))]
    async fn create_board(&self, board: &Board) -> Result<Option<Board>, StoreError> {
        let item = |pk: String, sk: String| BoardItem {
            pk,
            sk,
            kind: "board".into(),
            board: board.clone(),
        };
        let main = item(format!("B#{}", board.leaderboard_id), "BOARD".into());
        let listed = item(LIST_PK.into(), board.list_key());
        let res = self
            .client
            .transact_write_items()
            .transact_items(self.put(
                serde_dynamo::to_item(main).map_err(StoreError::item)?,
                "attribute_not_exists(pk)",
                Item::new(),
            )?)
            .transact_items(self.put(
                serde_dynamo::to_item(listed).map_err(StoreError::item)?,
                "attribute_not_exists(pk)",
                Item::new(),
            )?)
            .send()
            .await;
        match res {
            Ok(_) => Ok(None),
            Err(e) if cancelled_first(&e) => match self.get_board(&board.leaderboard_id).await? {
                Some(existing) => Ok(Some(existing)),
                // Deleted between the two calls: report the race as a conflict.
                None => Ok(Some(board.clone())),
            },
            Err(e) => Err(StoreError::call("TransactWriteItems(board)", e)),
        }
    }

    #[instrument(skip(self))]
    async fn set_status(
        &self,
        lb: &LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    ) -> Result<bool, StoreError> {
        let Some(board) = self.get_board(lb).await? else {
            return Ok(false);
        };
        let values: Item = HashMap::from([
            (":from".to_owned(), AttributeValue::S(from.as_str().into())),
            (":to".to_owned(), AttributeValue::S(to.as_str().into())),
        ]);
        let update = |key: Item| -> Result<TransactWriteItem, StoreError> {
            let u = Update::builder()
                .table_name(&self.table)
                .set_key(Some(key))
                .update_expression("SET #st = :to")
                .condition_expression("#st = :from")
                .expression_attribute_names("#st", "status")
                .set_expression_attribute_values(Some(values.clone()))
                .build()
                .map_err(StoreError::request)?;
            Ok(TransactWriteItem::builder().update(u).build())
        };
        let res = self
            .client
            .transact_write_items()
            .transact_items(update(board_key(lb))?)
            .transact_items(update(key(LIST_PK.into(), board.list_key()))?)
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) if cancelled_first(&e) => Ok(false),
            Err(e) => Err(StoreError::call("TransactWriteItems(status)", e)),
        }
    }

    #[instrument(skip(self, rules))]
    async fn set_integrity(
        &self,
        lb: &LeaderboardId,
        rules: Option<&Integrity>,
    ) -> Result<bool, StoreError> {
        self.set_board_attribute(
            lb,
            "integrity",
            value_of(rules)?,
            "TransactWriteItems(integrity)",
        )
        .await
    }

    #[instrument(skip(self, table))]
    async fn set_rewards(
        &self,
        lb: &LeaderboardId,
        table: Option<&RewardTable>,
    ) -> Result<bool, StoreError> {
        self.set_board_attribute(
            lb,
            "rewards",
            value_of(table)?,
            "TransactWriteItems(rewards)",
        )
        .await
    }

    /// The board item and its list entry in one transaction, each on the condition
    /// [`BoardReset::may_replace`] states: a first reset where none is stored, the next
    /// after a done one, or a running one done.
    #[instrument(skip(self, reset), fields(n = reset.n))]
    async fn set_reset(&self, lb: &LeaderboardId, reset: &BoardReset) -> Result<bool, StoreError> {
        let Some(board) = self.get_board(lb).await? else {
            return Ok(false);
        };
        let (condition, n) = match (reset.running(), reset.n) {
            (true, 1) => ("attribute_not_exists(#r)", None),
            (true, n) => ("#r.#n = :n AND attribute_exists(#r.#d)", Some(n - 1)),
            (false, n) => ("#r.#n = :n AND attribute_not_exists(#r.#d)", Some(n)),
        };
        let mut values: Item = HashMap::from([(
            ":r".to_owned(),
            serde_dynamo::to_attribute_value(reset).map_err(StoreError::item)?,
        )]);
        if let Some(n) = n {
            values.insert(":n".to_owned(), AttributeValue::N(n.to_string()));
        }
        let mut tx = self.client.transact_write_items();
        for k in [board_key(lb), key(LIST_PK.into(), board.list_key())] {
            let mut u = (Update::builder().table_name(&self.table).set_key(Some(k)))
                .update_expression("SET #r = :r")
                .condition_expression(format!("attribute_exists(pk) AND {condition}"))
                .expression_attribute_names("#r", "reset")
                .set_expression_attribute_values(Some(values.clone()));
            if n.is_some() {
                u = u
                    .expression_attribute_names("#n", "n")
                    .expression_attribute_names("#d", "done_at");
            }
            let u = u.build().map_err(StoreError::request)?;
            tx = tx.transact_items(TransactWriteItem::builder().update(u).build());
        }
        match tx.send().await {
            Ok(_) => Ok(true),
            Err(e) if cancelled_first(&e) => Ok(false),
            Err(e) => Err(StoreError::call("TransactWriteItems(reset)", e)),
        }
    }

    #[instrument(skip(self, family, rules), fields(game = %family.game, mode = %family.mode))]
    async fn set_family_integrity(
        &self,
        family: &Family,
        rules: Option<&Integrity>,
    ) -> Result<bool, StoreError> {
        let changed = Family {
            integrity: rules.cloned(),
            ..family.clone()
        };
        self.set_family_attribute(&changed, "integrity", value_of(rules)?)
            .await
    }

    async fn set_family_rewards(
        &self,
        family: &Family,
        table: Option<&RewardTable>,
    ) -> Result<bool, StoreError> {
        let changed = Family {
            rewards: table.cloned(),
            ..family.clone()
        };
        self.set_family_attribute(&changed, "rewards", value_of(table)?)
            .await
    }

    #[instrument(skip(self))]
    async fn list_boards(&self, prefix: &str, page: Paging<'_>) -> Result<BoardPage, StoreError> {
        let Paging { after, limit } = page;
        let start = after.map(|sk| key(LIST_PK.into(), sk.to_owned()));
        let mut q = self
            .client
            .query()
            .table_name(&self.table)
            .expression_attribute_values(":pk", AttributeValue::S(LIST_PK.into()));
        // DynamoDB refuses an empty begins_with operand: no prefix, no condition on sk.
        q = if prefix.is_empty() {
            q.key_condition_expression("pk = :pk")
        } else {
            q.key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                .expression_attribute_values(":prefix", AttributeValue::S(prefix.into()))
        };
        let q = q.set_exclusive_start_key(start).limit(limit as i32);
        let (items, next) = page_of::<BoardItem>(q, "Query(board list)").await?;
        let boards = items.into_iter().map(|b| b.board).collect();
        Ok(BoardPage { boards, next })
    }

    #[instrument(skip(self))]
    async fn get_family(&self, game: &str, mode: &str) -> Result<Option<Family>, StoreError> {
        let item = self
            .get_item(family_key(game, mode), "GetItem(family)")
            .await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, FamilyItem>(item)
                    .map_err(StoreError::item)?
                    .family,
            ),
            None => None,
        })
    }

    #[instrument(skip(self), fields(game = %family.game, mode = %family.mode))]
    async fn create_family(&self, family: &Family) -> Result<Option<Family>, StoreError> {
        let item = FamilyItem {
            pk: format!("F#{}#{}", family.game, family.mode),
            sk: "FAMILY".into(),
            kind: "family".into(),
            family: family.clone(),
        };
        let created = self
            .put_new(
                serde_dynamo::to_item(item).map_err(StoreError::item)?,
                "PutItem(family)",
            )
            .await?;
        let stored = match created {
            true => family.clone(),
            false => (self.get_family(&family.game, &family.mode).await?)
                .unwrap_or_else(|| family.clone()),
        };
        // Listed after it exists, every time it is asked for: a crash between the two
        // puts leaves it unlisted only until the same request is made again (and a
        // family stored before the list existed joins it then).
        let listed = FamilyItem {
            pk: FAMILY_LIST_PK.into(),
            sk: format!("{}#{}", stored.game, stored.mode),
            kind: "family_listed".into(),
            family: stored.clone(),
        };
        self.put_plain(listed, "PutItem(family list)").await?;
        Ok((!created).then_some(stored))
    }

    #[instrument(skip(self))]
    async fn list_families(&self, page: Paging<'_>) -> Result<FamilyPage, StoreError> {
        let q = self.partition_page(FAMILY_LIST_PK, page);
        let (items, next) = page_of::<FamilyItem>(q, "Query(family list)").await?;
        let families = items.into_iter().map(|f| f.family).collect();
        Ok(FamilyPage { families, next })
    }
}

/// The update of an item's `integrity` (set, or removed for none), if the item exists.
/// An attribute's stored value (`None`: the attribute is removed).
fn value_of<T: serde::Serialize>(v: Option<&T>) -> Result<Option<AttributeValue>, StoreError> {
    v.map(|v| serde_dynamo::to_attribute_value(v).map_err(StoreError::item))
        .transpose()
}

/// Sets attribute `name` of the item at `key` to `value` (removes it for `None`), on
/// the condition that the item exists.
fn attribute_update(
    table: &str,
    key: Item,
    name: &str,
    value: Option<AttributeValue>,
) -> Result<TransactWriteItem, StoreError> {
    let u = (Update::builder().table_name(table).set_key(Some(key)))
        .expression_attribute_names("#a", name);
    let u = match value {
        Some(v) => (u.update_expression("SET #a = :v")).expression_attribute_values(":v", v),
        None => u.update_expression("REMOVE #a"),
    };
    let u =
        (u.condition_expression("attribute_exists(pk)").build()).map_err(StoreError::request)?;
    Ok(TransactWriteItem::builder().update(u).build())
}

impl DynamoScoreStore {
    /// Sets one attribute of a board item and its list entry in one transaction; false
    /// if there is no board.
    async fn set_board_attribute(
        &self,
        lb: &LeaderboardId,
        name: &str,
        value: Option<AttributeValue>,
        op: &'static str,
    ) -> Result<bool, StoreError> {
        let Some(board) = self.get_board(lb).await? else {
            return Ok(false);
        };
        let keys = [board_key(lb), key(LIST_PK.into(), board.list_key())];
        let mut tx = self.client.transact_write_items();
        for k in keys {
            tx = tx.transact_items(attribute_update(&self.table, k, name, value.clone())?);
        }
        match tx.send().await {
            Ok(_) => Ok(true),
            Err(e) if cancelled_first(&e) => Ok(false),
            Err(e) => Err(StoreError::call(op, e)),
        }
    }

    /// Sets one attribute of a family item, then writes its list copy whole (`changed`:
    /// the family with the new value; a family stored before the list existed joins
    /// it); false if there is no family.
    async fn set_family_attribute(
        &self,
        changed: &Family,
        name: &str,
        value: Option<AttributeValue>,
    ) -> Result<bool, StoreError> {
        let (pk, sk) = family_pk_sk(&changed.game, &changed.mode);
        let update = attribute_update(&self.table, key(pk, sk), name, value)?;
        let res = (self.client.transact_write_items())
            .transact_items(update)
            .send()
            .await;
        match res {
            Ok(_) => {}
            Err(e) if cancelled_first(&e) => return Ok(false),
            Err(e) => return Err(StoreError::call("TransactWriteItems(family)", e)),
        }
        let listed = FamilyItem {
            pk: FAMILY_LIST_PK.into(),
            sk: format!("{}#{}", changed.game, changed.mode),
            kind: "family_listed".into(),
            family: changed.clone(),
        };
        self.put_plain(listed, "PutItem(family list)").await?;
        Ok(true)
    }
}
