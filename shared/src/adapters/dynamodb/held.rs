//! [`HeldStore`] over DynamoDB: a game's review queue is one partition (`HQ#{game}`),
//! its items ordered by when they were held (`HeldResult::queue_key`). Held results are
//! rare, so one partition per game is far from any limit; the items join and leave the
//! queue in the transactions of their rows' writes (`standings.rs`).

use aws_sdk_dynamodb::types::{AttributeValue, Delete, TransactWriteItem, Update};
use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{Item, key};
use leaderboard_core::store::{
    HeldFilter, HeldPage, HeldResult, HeldStore, MATCH_SPAN_MS, QueueChange, StoreError,
};
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::integrity::Rule;
use leaderboard_rules::profile::Metadata;
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

/// A game's queue partition.
fn queue_partition(game: &str) -> String {
    format!("HQ#{game}")
}

/// A held result as stored.
#[derive(Debug, Serialize, Deserialize)]
struct HeldItem {
    pk: String,
    sk: String,
    kind: String,
    game: String,
    leaderboard_id: LeaderboardId,
    player_id: PlayerId,
    match_id: MatchId,
    score: Score,
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    ties: Ties,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    event_ts: Option<i64>,
    reached_at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    md: Option<String>,
    rule: Rule,
    value: i64,
    limit: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    standing: Option<Score>,
    held_at: i64,
    #[serde(default, skip_serializing_if = "ScoreFormat::is_integer")]
    scores: ScoreFormat,
}

/// A held result from its item's stream image (the projector publishes
/// `leaderboard.result.held` from it).
pub(super) fn held_of(image: serde_dynamo::Item) -> Result<HeldResult, String> {
    serde_dynamo::from_item::<_, HeldItem>(image)
        .map(HeldItem::held)
        .map_err(|e| e.to_string())
}

impl HeldItem {
    fn of(h: &HeldResult) -> Self {
        Self {
            pk: queue_partition(&h.game),
            sk: h.queue_key(),
            kind: "held".into(),
            game: h.game.clone(),
            leaderboard_id: h.leaderboard_id.clone(),
            player_id: h.player_id.clone(),
            match_id: h.match_id.clone(),
            score: h.score,
            ties: h.ties.clone(),
            event_ts: h.event_ts,
            reached_at: h.reached_at,
            md: h.metadata.as_ref().map(|m| m.as_str().to_owned()),
            rule: h.rule,
            value: h.value,
            limit: h.limit,
            standing: h.standing,
            held_at: h.held_at,
            scores: h.scores,
        }
    }

    fn held(self) -> HeldResult {
        HeldResult {
            game: self.game,
            leaderboard_id: self.leaderboard_id,
            player_id: self.player_id,
            match_id: self.match_id,
            score: self.score,
            ties: self.ties,
            event_ts: self.event_ts,
            reached_at: self.reached_at,
            metadata: self.md.as_deref().and_then(Metadata::stored),
            rule: self.rule,
            value: self.value,
            limit: self.limit,
            standing: self.standing,
            held_at: self.held_at,
            scores: self.scores,
        }
    }
}

/// The queue's part of a row's transaction: the item put if absent (held), or deleted
/// if present (decided).
pub(super) fn queue_write(
    store: &DynamoScoreStore,
    change: QueueChange<'_>,
) -> Result<TransactWriteItem, StoreError> {
    match change {
        QueueChange::Hold(h) => {
            let item = serde_dynamo::to_item(HeldItem::of(h)).map_err(StoreError::item)?;
            store.put(item, "attribute_not_exists(pk)", Item::new())
        }
        QueueChange::Release(h) | QueueChange::Reject(h) => {
            let delete = Delete::builder()
                .table_name(store.table())
                .set_key(Some(key(queue_partition(&h.game), h.queue_key())))
                .condition_expression("attribute_exists(pk)")
                .build()
                .map_err(StoreError::request)?;
            Ok(TransactWriteItem::builder().delete(delete).build())
        }
    }
}

/// A rejection counted on the player's tally in its game (`HR#{game}`, the player): its
/// match joins the set `rejected`, in the same transaction as the decision. (A tally
/// from before matches counted once kept a number, `rejections`, which still counts.)
/// The same item records the operators' decision on each match (`decided#{match}`).
pub(super) fn rejection_count(
    store: &DynamoScoreStore,
    change: QueueChange<'_>,
) -> Result<Option<TransactWriteItem>, StoreError> {
    let QueueChange::Reject(h) = change else {
        return Ok(None);
    };
    let update = Update::builder()
        .table_name(store.table())
        .set_key(Some(key(
            rejections_partition(&h.game),
            h.player_id.to_string(),
        )))
        // A set: the match's other boards add the same member, so it counts once.
        .update_expression("ADD rejected :m SET kind = :kind")
        .expression_attribute_values(":m", AttributeValue::Ss(vec![h.match_id.to_string()]))
        .expression_attribute_values(":kind", AttributeValue::S("rejections".into()))
        .build()
        .map_err(StoreError::request)?;
    Ok(Some(TransactWriteItem::builder().update(update).build()))
}

/// A game's tallies of rejected results, by player.
fn rejections_partition(game: &str) -> String {
    format!("HR#{game}")
}

impl HeldStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn rejections(&self, game: &str, player: &PlayerId) -> Result<u32, StoreError> {
        let item = self
            .get_item(
                key(rejections_partition(game), player.to_string()),
                "GetItem(rejections)",
            )
            .await?;
        let counted: u32 = (item.as_ref())
            .and_then(|i| i.get("rejections"))
            .and_then(|v| v.as_n().ok())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        let matches = (item.as_ref())
            .and_then(|i| i.get("rejected"))
            .and_then(|v| v.as_ss().ok())
            .map_or(0, Vec::len);
        Ok(counted + matches as u32)
    }

    #[instrument(skip(self))]
    async fn held_of_match(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        around: Option<i64>,
    ) -> Result<Vec<HeldResult>, StoreError> {
        let pk = queue_partition(game);
        let query = (self.client.query().table_name(self.table()))
            .consistent_read(true)
            .expression_attribute_values(":pk", AttributeValue::S(pk))
            .filter_expression("player_id = :p AND match_id = :m")
            .expression_attribute_values(":p", AttributeValue::S(player.to_string()))
            .expression_attribute_values(":m", AttributeValue::S(match_id.to_string()));
        let query = match around {
            // Queue keys start with the time held, 13 digits: a range of them.
            Some(at) => query
                .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
                .expression_attribute_values(
                    ":lo",
                    AttributeValue::S(format!("{:013}", at - MATCH_SPAN_MS)),
                )
                .expression_attribute_values(
                    ":hi",
                    AttributeValue::S(format!("{:013}~", at + MATCH_SPAN_MS)),
                ),
            None => query.key_condition_expression("pk = :pk"),
        };
        let items = (query.into_paginator().items().send().try_collect().await)
            .map_err(|e| StoreError::call("Query(held of a match)", e))?;
        (items.into_iter())
            .map(|i| serde_dynamo::from_item::<_, HeldItem>(i).map(HeldItem::held))
            .collect::<Result<_, _>>()
            .map_err(StoreError::item)
    }

    #[instrument(skip(self))]
    async fn claim_decision(
        &self,
        game: &str,
        player: &PlayerId,
        match_id: &MatchId,
        approve: bool,
    ) -> Result<bool, StoreError> {
        let decided = if approve { "approve" } else { "reject" };
        let out = (self.client.update_item().table_name(self.table()))
            .set_key(Some(key(rejections_partition(game), player.to_string())))
            // The first decision stays: if_not_exists keeps what is there.
            .update_expression("SET #d = if_not_exists(#d, :d), kind = :kind")
            .expression_attribute_names("#d", format!("decided#{match_id}"))
            .expression_attribute_values(":d", AttributeValue::S(decided.into()))
            .expression_attribute_values(":kind", AttributeValue::S("rejections".into()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| StoreError::call("UpdateItem(decision)", e))?;
        let stands = (out.attributes.as_ref())
            .and_then(|a| a.get(&format!("decided#{match_id}")))
            .and_then(|v| v.as_s().ok())
            .ok_or_else(|| StoreError::item(std::io::Error::other("no decision returned")))?;
        Ok(stands == "approve")
    }

    #[instrument(skip(self))]
    async fn get_held(&self, game: &str, qk: &str) -> Result<Option<HeldResult>, StoreError> {
        let item =
            (self.get_item(key(queue_partition(game), qk.to_owned()), "GetItem(held)")).await?;
        item.map(|i| serde_dynamo::from_item::<_, HeldItem>(i).map(HeldItem::held))
            .transpose()
            .map_err(StoreError::item)
    }

    #[instrument(skip(self))]
    async fn held_page(
        &self,
        game: &str,
        filter: &HeldFilter,
        page: Paging<'_>,
    ) -> Result<HeldPage, StoreError> {
        let pk = queue_partition(game);
        let mut query = self.partition_page(&pk, page);
        let mut filters = Vec::new();
        if let Some(board) = &filter.board {
            filters.push("leaderboard_id = :lb");
            query = query.expression_attribute_values(":lb", AttributeValue::S(board.to_string()));
        }
        if let Some(player) = &filter.player {
            filters.push("player_id = :p");
            query = query.expression_attribute_values(":p", AttributeValue::S(player.to_string()));
        }
        if !filters.is_empty() {
            query = query.filter_expression(filters.join(" AND "));
        }
        let (items, next) = super::page_of::<HeldItem>(query, "Query(held)").await?;
        let held = items.into_iter().map(HeldItem::held).collect();
        Ok(HeldPage { held, next })
    }
}
