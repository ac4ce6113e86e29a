//! [`ProfileStore`] over DynamoDB: one item per player (`P#{player}`, `PROFILE`), its
//! `version` the condition of every write. An erased profile keeps only its key and
//! version. A profile with a name carries its name entry (`nk`, `nf`), which the
//! `by_name` index is keyed on: written with the profile, in the same PutItem, so the
//! index cannot hold a name the table does not (it may lag it by a moment).

use aws_sdk_dynamodb::types::AttributeValue;
use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::keys::{Item, key, profile_pk_sk};
use super::{DynamoScoreStore, NAME_INDEX};
use leaderboard_core::store::{
    CommitOutcome, Consistency, NamePage, ProfileStore, StoreError, StoredProfile, VersionedCard,
    entry_player, name_entry,
};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::profile::{Card, Profile};

/// The attributes a row's card is read with.
const CARD_ATTRIBUTES: &str = "pk, version, display_name, avatar, country";

#[derive(Debug, Serialize, Deserialize)]
struct ProfileItem {
    pk: String,
    sk: String,
    kind: String,
    version: u64,
    #[serde(default)]
    updated_at: i64,
    #[serde(flatten)]
    card: Card,
    /// The attributes as compact JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attributes: Option<String>,
    /// The name index's partition and entry (absent without a name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nk: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nf: Option<String>,
}

/// The name index's partition of an entry: `N#` and its first character.
fn name_partition(entry: &str) -> String {
    format!("N#{}", entry.chars().next().unwrap_or_default())
}

/// A card as BatchGetItem projects it.
#[derive(Debug, Deserialize)]
struct CardItem {
    pk: String,
    version: u64,
    #[serde(flatten)]
    card: Card,
}

fn profile_key(player: &PlayerId) -> Item {
    let (pk, sk) = profile_pk_sk(player);
    key(pk, sk)
}

impl ProfileStore for DynamoScoreStore {
    #[instrument(skip(self))]
    async fn get_profile(&self, player: &PlayerId) -> Result<StoredProfile, StoreError> {
        let Some(item) = self
            .get_item(profile_key(player), "GetItem(profile)")
            .await?
        else {
            return Ok(StoredProfile::default());
        };
        let item: ProfileItem = serde_dynamo::from_item(item).map_err(StoreError::item)?;
        let attributes = item
            .attributes
            .map(|text| serde_json::from_str(&text))
            .transpose()
            .map_err(|e| StoreError::Corrupt(format!("profile attributes: {e}")))?;
        Ok(StoredProfile {
            profile: Profile {
                card: item.card,
                attributes,
            },
            version: item.version,
            updated_at: item.updated_at,
        })
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn get_cards(&self, players: &[PlayerId]) -> Result<Vec<VersionedCard>, StoreError> {
        let keys = players.iter().map(profile_key).collect();
        let items = self
            .batch_get(
                keys,
                Some(CARD_ATTRIBUTES),
                Consistency::Eventual,
                "BatchGetItem(profiles)",
            )
            .await?;
        let mut found = std::collections::HashMap::new();
        for item in items {
            let item: CardItem = serde_dynamo::from_item(item).map_err(StoreError::item)?;
            found.insert(item.pk.clone(), item);
        }
        Ok(players
            .iter()
            .map(|p| {
                found
                    .remove(&profile_pk_sk(p).0)
                    .map(|i| VersionedCard {
                        version: i.version,
                        card: i.card,
                    })
                    .unwrap_or_default()
            })
            .collect())
    }

    #[instrument(skip(self, profile), fields(version = profile.version))]
    async fn put_profile(
        &self,
        player: &PlayerId,
        profile: &StoredProfile,
    ) -> Result<CommitOutcome, StoreError> {
        let (pk, sk) = profile_pk_sk(player);
        let nf = name_entry(&profile.profile.card, player);
        let item = ProfileItem {
            nk: nf.as_deref().map(name_partition),
            nf,
            pk,
            sk,
            kind: "profile".into(),
            version: profile.version,
            updated_at: profile.updated_at,
            card: profile.profile.card.clone(),
            attributes: profile
                .profile
                .attributes
                .as_ref()
                .map(serde_json::to_string)
                .transpose()
                .map_err(|e| StoreError::Corrupt(format!("profile attributes: {e}")))?,
        };
        let item = serde_dynamo::to_item(item).map_err(StoreError::item)?;
        let written = match profile.version.checked_sub(1) {
            None | Some(0) => self.put_new(item, "PutItem(profile)").await?,
            Some(before) => {
                let values = [(":before".to_owned(), AttributeValue::N(before.to_string()))].into();
                self.put_if(item, "version = :before", values, "PutItem(profile)")
                    .await?
            }
        };
        Ok(if written {
            CommitOutcome::Committed
        } else {
            CommitOutcome::StandingChanged
        })
    }

    #[instrument(skip(self))]
    async fn find_names(&self, prefix: &str, page: Paging<'_>) -> Result<NamePage, StoreError> {
        let Paging { after, limit } = page;
        let nk = name_partition(prefix);
        // Where the last page stopped: the index's key and the table's, as DynamoDB
        // gave it (the entry names the player, whose profile key follows).
        let start = match after {
            None => None,
            Some(entry) => {
                let player = entry_player(entry)
                    .ok_or_else(|| StoreError::Corrupt(format!("name entry {entry:?}")))?;
                let mut at = profile_key(&player);
                at.insert("nk".into(), AttributeValue::S(nk.clone()));
                at.insert("nf".into(), AttributeValue::S(entry.to_owned()));
                Some(at)
            }
        };
        let out = (self.client.query())
            .table_name(&self.table)
            .index_name(NAME_INDEX)
            .key_condition_expression("nk = :nk AND begins_with(nf, :prefix)")
            .expression_attribute_values(":nk", AttributeValue::S(nk))
            .expression_attribute_values(":prefix", AttributeValue::S(prefix.to_owned()))
            .set_exclusive_start_key(start)
            .limit(limit as i32)
            .send()
            .await
            .map_err(|e| StoreError::call("Query(by_name)", e))?;
        let entry = |item: &Item| item.get("nf").and_then(|v| v.as_s().ok()).cloned();
        let next = out.last_evaluated_key().and_then(entry);
        let players = (out.items())
            .iter()
            .filter_map(|item| entry_player(&entry(item)?))
            .collect();
        Ok(NamePage { players, next })
    }
}
