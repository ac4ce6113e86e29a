//! [`SealStore`] over DynamoDB: the sealing's progress (`SEAL#{board}`, claimed and kept
//! with conditional writes on its `owner`), the results (`RES#{board}`) and players'
//! history (`H#{player}`, one row per sealed window, sorted by family, scope, period and
//! the window's end, so a player's weeks come newest first from one query).

use std::collections::HashMap;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{
    Item, LIST_PK, board_key, history_partition, history_prefix, history_sk, key, results_pk_sk,
    seal_pk_sk,
};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{HistoryQuery, HistoryRow, Results, SealState, SealStore};
use leaderboard_rules::board::Board;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};

#[derive(Serialize, Deserialize)]
struct SealItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    state: SealState,
}

#[derive(Serialize, Deserialize)]
struct ResultsItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    results: Results,
}

#[derive(Serialize, Deserialize)]
struct HistoryItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    row: HistoryRow,
}

fn seal_key(lb: &LeaderboardId) -> Item {
    let (pk, sk) = seal_pk_sk(lb);
    key(pk, sk)
}

fn results_key(lb: &LeaderboardId) -> Item {
    let (pk, sk) = results_pk_sk(lb);
    key(pk, sk)
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn history_item(row: &HistoryRow) -> Result<Item, StoreError> {
    let w = &row.window;
    let prefix = history_prefix(&w.game, &w.mode, &w.scope, w.period);
    serde_dynamo::to_item(HistoryItem {
        pk: history_partition(&row.player_id),
        sk: history_sk(&prefix, w.end),
        kind: "history".into(),
        row: row.clone(),
    })
    .map_err(StoreError::item)
}

impl SealStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_seal(&self, lb: &LeaderboardId) -> Result<Option<SealState>, StoreError> {
        let item = self.get_item(seal_key(lb), "GetItem(seal)").await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, SealItem>(item)
                    .map_err(StoreError::item)?
                    .state,
            ),
            None => None,
        })
    }

    #[instrument(skip(self))]
    async fn claim_seal(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<Option<SealState>, StoreError> {
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(seal_key(lb)))
            .update_expression(
                "SET #owner = :o, #lease = :l, #kind = :kind, \
                 #started = if_not_exists(#started, :now), \
                 #recorded = if_not_exists(#recorded, :zero), \
                 #walked = if_not_exists(#walked, :f), \
                 #published = if_not_exists(#published, :f)",
            )
            .condition_expression("attribute_not_exists(pk) OR (#published = :f AND #lease < :now)")
            .set_expression_attribute_names(Some(HashMap::from(
                [
                    ("#owner", "owner"),
                    ("#lease", "lease_until"),
                    ("#kind", "kind"),
                    ("#started", "started_at"),
                    ("#recorded", "recorded"),
                    ("#walked", "walked"),
                    ("#published", "published"),
                ]
                .map(|(k, v)| (k.to_owned(), v.to_owned())),
            )))
            .set_expression_attribute_values(Some(HashMap::from(
                [
                    (":o", s(owner)),
                    (":l", n(lease_until)),
                    (":kind", s("seal")),
                    (":now", n(now)),
                    (":zero", n(0)),
                    (":f", AttributeValue::Bool(false)),
                ]
                .map(|(k, v)| (k.to_owned(), v)),
            )))
            .return_values(ReturnValue::AllNew)
            .send()
            .await;
        match res {
            Ok(out) => {
                let item = out.attributes.unwrap_or_default();
                Ok(Some(
                    serde_dynamo::from_item::<_, SealItem>(item)
                        .map_err(StoreError::item)?
                        .state,
                ))
            }
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(None)
            }
            Err(e) => Err(StoreError::call("UpdateItem(claim seal)", e)),
        }
    }

    #[instrument(skip(self, state), fields(recorded = state.recorded))]
    async fn save_seal(&self, lb: &LeaderboardId, state: &SealState) -> Result<bool, StoreError> {
        let (pk, sk) = seal_pk_sk(lb);
        let item = SealItem {
            pk,
            sk,
            kind: "seal".into(),
            state: state.clone(),
        };
        let item = serde_dynamo::to_item(item).map_err(StoreError::item)?;
        self.put_if_owner(item, &state.owner, "PutItem(seal)").await
    }

    #[instrument(skip_all, fields(rows = rows.len()))]
    async fn put_history(&self, rows: &[HistoryRow]) -> Result<(), StoreError> {
        let items = rows.iter().map(history_item).collect::<Result<_, _>>()?;
        self.put_items(items).await
    }

    #[instrument(skip(self))]
    async fn history(&self, q: &HistoryQuery<'_>) -> Result<Vec<HistoryRow>, StoreError> {
        let prefix = history_prefix(q.game, q.mode, q.scope, q.period);
        let mut query = self
            .client
            .query()
            .table_name(&self.table)
            .expression_attribute_values(":pk", s(history_partition(q.player)))
            .scan_index_forward(false)
            .limit(q.limit as i32);
        query = match q.end_at_most {
            Some(end) => query
                .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
                .expression_attribute_values(":lo", s(prefix.clone()))
                .expression_attribute_values(":hi", s(history_sk(&prefix, end.max(0)))),
            None => query
                .key_condition_expression("pk = :pk AND begins_with(sk, :prefix)")
                .expression_attribute_values(":prefix", s(prefix)),
        };
        let out = query
            .send()
            .await
            .map_err(|e| StoreError::call("Query(history)", e))?;
        out.items
            .unwrap_or_default()
            .into_iter()
            .map(|item| {
                Ok(serde_dynamo::from_item::<_, HistoryItem>(item)
                    .map_err(StoreError::item)?
                    .row)
            })
            .collect()
    }

    #[instrument(skip(self))]
    async fn erase_history(&self, player: &PlayerId) -> Result<u64, StoreError> {
        self.delete_partition(&history_partition(player), "history")
            .await
    }

    #[instrument(skip_all, fields(board = %results.window.leaderboard_id))]
    async fn put_results(&self, results: &Results) -> Result<(), StoreError> {
        let (pk, sk) = results_pk_sk(&results.window.leaderboard_id);
        let item = ResultsItem {
            pk,
            sk,
            kind: "results".into(),
            results: results.clone(),
        };
        self.put_plain(item, "PutItem(results)").await
    }

    #[instrument(skip(self))]
    async fn get_results(&self, lb: &LeaderboardId) -> Result<Option<Results>, StoreError> {
        let item = self.get_item(results_key(lb), "GetItem(results)").await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, ResultsItem>(item)
                    .map_err(StoreError::item)?
                    .results,
            ),
            None => None,
        })
    }

    #[instrument(skip(self))]
    async fn redact_results(
        &self,
        lb: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        let Some(mut results) = self.get_results(lb).await? else {
            return Ok(false);
        };
        let changed = results.unname(player);
        if changed {
            self.put_results(&results).await?;
        }
        Ok(changed)
    }

    #[instrument(skip(self, board), fields(board = %board.leaderboard_id))]
    async fn mark_sealed(&self, board: &Board, at: i64) -> Result<(), StoreError> {
        for k in [
            board_key(&board.leaderboard_id),
            key(LIST_PK.into(), board.list_key()),
        ] {
            let res = self
                .client
                .update_item()
                .table_name(&self.table)
                .set_key(Some(k))
                .update_expression("SET sealed_at = :at")
                .condition_expression("attribute_exists(pk)")
                .expression_attribute_values(":at", n(at))
                .send()
                .await;
            match res {
                Ok(_) => {}
                Err(SdkError::ServiceError(e))
                    if e.err().is_conditional_check_failed_exception() => {}
                Err(e) => return Err(StoreError::call("UpdateItem(sealed)", e)),
            }
        }
        Ok(())
    }
}

impl DynamoScoreStore {
    /// Puts a lease-held item (a seal's or an export's progress) if `owner` still holds
    /// it: false if another run took it over (nothing written).
    pub(super) async fn put_if_owner(
        &self,
        item: Item,
        owner: &str,
        op: &'static str,
    ) -> Result<bool, StoreError> {
        let res = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("#owner = :o")
            .expression_attribute_names("#owner", "owner")
            .expression_attribute_values(":o", s(owner))
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(SdkError::ServiceError(e)) if e.err().is_conditional_check_failed_exception() => {
                Ok(false)
            }
            Err(e) => Err(StoreError::call(op, e)),
        }
    }
}
