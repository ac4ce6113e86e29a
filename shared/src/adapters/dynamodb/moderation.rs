//! [`ModerationStore`] over DynamoDB: bans (`BAN#{game}`, `{player}`, also checked by
//! every commit to a game's boards, with a copy under `PB#{player}`, `{game}` so that an
//! erasure finds a player's bans with one query) and the audit trail (partition `AU`, sorted by
//! record id, which starts with the time: operators' actions are rare, so one partition
//! serves them all).

use aws_sdk_dynamodb::types::AttributeValue;
use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::DynamoScoreStore;
use super::keys::{AUDIT_PK, Item, ban_pk_sk, bans_partition, key, player_ban_pk_sk};
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{AuditPage, AuditRecord, Ban, BanPage, ModerationStore};
use leaderboard_rules::ids::PlayerId;

#[derive(Debug, Serialize, Deserialize)]
struct BanItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    ban: Ban,
}

impl BanItem {
    /// The ban stored at `(pk, sk)` as a `kind` item (one per game, one per player).
    fn of((pk, sk): (String, String), kind: &str, ban: &Ban) -> Self {
        Self {
            pk,
            sk,
            kind: kind.to_owned(),
            ban: ban.clone(),
        }
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct AuditItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    record: AuditRecord,
}

impl AuditItem {
    /// The stored item of `record`.
    pub(super) fn of(record: &AuditRecord) -> Self {
        Self {
            pk: AUDIT_PK.into(),
            sk: record.id.clone(),
            kind: "audit".into(),
            record: record.clone(),
        }
    }
}

impl ModerationStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn put_ban(&self, ban: &Ban) -> Result<(), StoreError> {
        let by_game = BanItem::of(ban_pk_sk(&ban.game, &ban.player_id), "ban", ban);
        self.put_plain(by_game, "PutItem(ban)").await?;
        let by_player = BanItem::of(
            player_ban_pk_sk(&ban.player_id, &ban.game),
            "player_ban",
            ban,
        );
        self.put_plain(by_player, "PutItem(player ban)").await
    }

    #[instrument(skip(self))]
    async fn get_ban(&self, game: &str, player: &PlayerId) -> Result<Option<Ban>, StoreError> {
        let (pk, sk) = ban_pk_sk(game, player);
        let item = self.get_item(key(pk, sk), "GetItem(ban)").await?;
        ban_of(item)
    }

    #[instrument(skip(self))]
    async fn delete_ban(&self, game: &str, player: &PlayerId) -> Result<Option<Ban>, StoreError> {
        let (pk, sk) = ban_pk_sk(game, player);
        let old = self.delete_item(key(pk, sk), "DeleteItem(ban)").await?;
        let (pk, sk) = player_ban_pk_sk(player, game);
        self.delete_item(key(pk, sk), "DeleteItem(player ban)")
            .await?;
        ban_of(old)
    }

    #[instrument(skip(self))]
    async fn bans_page(&self, game: &str, page: Paging<'_>) -> Result<BanPage, StoreError> {
        let q = (self.partition_page(&bans_partition(game), page)).consistent_read(true);
        let (items, next) = super::page_of::<BanItem>(q, "Query(bans)").await?;
        let bans = items.into_iter().map(|b| b.ban).collect();
        Ok(BanPage { bans, next })
    }

    #[instrument(skip(self))]
    async fn bans_of(&self, player: &PlayerId) -> Result<Vec<Ban>, StoreError> {
        let mut bans = Vec::new();
        let mut start = None;
        let (pk, _) = player_ban_pk_sk(player, "");
        loop {
            let out = self
                .partition(&pk)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| StoreError::call("Query(player bans)", e))?;
            for item in out.items.unwrap_or_default() {
                bans.push(
                    serde_dynamo::from_item::<_, BanItem>(item)
                        .map_err(StoreError::item)?
                        .ban,
                );
            }
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(bans);
            }
        }
    }

    #[instrument(skip_all, fields(action = ?record.action))]
    async fn append_audit(&self, record: &AuditRecord) -> Result<(), StoreError> {
        self.put_plain(AuditItem::of(record), "PutItem(audit)")
            .await
    }

    #[instrument(skip(self))]
    async fn audit_page(&self, page: Paging<'_>) -> Result<AuditPage, StoreError> {
        // Newest first: `page.after` is the last record of the page before, older ones follow.
        let q = (self.partition_page(AUDIT_PK, page)).scan_index_forward(false);
        let (items, next) = super::page_of::<AuditItem>(q, "Query(audit)").await?;
        let records = items.into_iter().map(|a| a.record).collect();
        Ok(AuditPage { records, next })
    }

    #[instrument(skip(self))]
    async fn redact_audit(&self, player: &PlayerId) -> Result<u64, StoreError> {
        let mut changed = 0;
        let mut start = None;
        loop {
            let out = self
                .partition(AUDIT_PK)
                .filter_expression("player_id = :p")
                .expression_attribute_values(":p", AttributeValue::S(player.to_string()))
                .projection_expression("pk, sk")
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(|e| StoreError::call("Query(audit by player)", e))?;
            for k in out.items.unwrap_or_default() {
                self.client
                    .update_item()
                    .table_name(&self.table)
                    .set_key(Some(k))
                    .update_expression("REMOVE player_id SET player_erased = :t")
                    .expression_attribute_values(":t", AttributeValue::Bool(true))
                    .send()
                    .await
                    .map_err(|e| StoreError::call("UpdateItem(audit)", e))?;
                changed += 1;
            }
            start = out.last_evaluated_key;
            if start.is_none() {
                return Ok(changed);
            }
        }
    }
}

/// The ban a ban item holds, if there is one.
fn ban_of(item: Option<Item>) -> Result<Option<Ban>, StoreError> {
    item.map(|i| serde_dynamo::from_item::<_, BanItem>(i).map(|b| b.ban))
        .transpose()
        .map_err(StoreError::item)
}
