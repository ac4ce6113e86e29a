//! [`TournamentStore`] over DynamoDB: definitions in one partition, and per occurrence
//! seat items (sharded by seat number) and membership items (sharded by player), a join
//! writing one of each in one transaction (docs/tournaments.md).

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{AttributeValue, Put, ReturnValue, TransactWriteItem};
use futures::future::try_join_all;
use leaderboard_rules::page::Paging;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::keys::{
    Item, SHARDS, TOURNAMENTS_PK, key, league_pk_sk, member_pk_sk, seat_counter_pk_sk,
    seat_partition, seat_pk_sk,
};
use super::moderation::AuditItem;
use super::{DynamoScoreStore, page_of};
use leaderboard_core::store::{
    AuditRecord, Consistency, SeatTaken, StoreError, TournamentPage, TournamentStore,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::league::{LeagueStanding, TierChange};
use leaderboard_rules::tournament::{Member, Tournament};

/// The cancellation reasons of a cancelled transaction, one code per item (`None`: that
/// item's part was fine); `None` if the error is not a cancellation.
pub(super) fn cancellation<R>(
    err: &SdkError<TransactWriteItemsError, R>,
) -> Option<Vec<Option<String>>> {
    match err.as_service_error() {
        Some(TransactWriteItemsError::TransactionCanceledException(tc)) => Some(
            tc.cancellation_reasons()
                .iter()
                .map(|r| r.code().filter(|c| *c != "None").map(str::to_owned))
                .collect(),
        ),
        _ => None,
    }
}

/// Whether item `i`'s condition failed.
pub(super) fn failed(reasons: &[Option<String>], i: usize) -> bool {
    reasons.get(i).and_then(Option::as_deref) == Some("ConditionalCheckFailed")
}

/// Whether another transaction held one of the items (nothing failed its condition).
pub(super) fn conflicted(reasons: &[Option<String>]) -> bool {
    (reasons.iter().flatten()).any(|c| c == "TransactionConflict")
}

/// A definition, kept as its JSON: the definition refuses unknown fields, and the
/// item's own attributes would be ones.
#[derive(Debug, Serialize, Deserialize)]
struct TournamentItem {
    pk: String,
    sk: String,
    kind: String,
    definition: String,
}

impl TournamentItem {
    fn tournament(&self) -> Result<Tournament, StoreError> {
        serde_json::from_str(&self.definition)
            .map_err(|e| StoreError::Corrupt(format!("tournament {}: {e}", self.sk)))
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct MemberItem {
    pk: String,
    sk: String,
    kind: String,
    #[serde(flatten)]
    member: Member,
}

#[derive(Debug, Serialize, Deserialize)]
struct SeatItem {
    pk: String,
    sk: String,
    kind: String,
    player: String,
}

/// A player's league standing, kept as its JSON, with a version each write moves on
/// (the condition of the next).
#[derive(Debug, Serialize, Deserialize)]
struct LeagueItem {
    pk: String,
    sk: String,
    kind: String,
    standing: String,
    v: u64,
}

/// Attempts at a standing's write when other writes move its version meanwhile.
const LEAGUE_TRIES: u32 = 8;

/// The seat number of a seat item's sort key.
fn seat_of(sk: &str) -> Option<u64> {
    sk.parse().ok()
}

impl DynamoScoreStore {
    /// One conditional `UpdateItem` of the occurrence's seat counter: the counter's new
    /// attributes, or `None` when the condition did not hold (nothing written).
    async fn update_counter(
        &self,
        occ: &LeaderboardId,
        update: &str,
        condition: &str,
        values: Item,
    ) -> Result<Option<Item>, StoreError> {
        let (pk, sk) = seat_counter_pk_sk(occ);
        let res = (self.client.update_item())
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression(update)
            .condition_expression(condition)
            .set_expression_attribute_values(Some(values))
            .return_values(ReturnValue::UpdatedNew)
            .send()
            .await;
        match res {
            Ok(out) => Ok(Some(out.attributes.unwrap_or_default())),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_conditional_check_failed_exception()) =>
            {
                Ok(None)
            }
            Err(e) => Err(StoreError::call("UpdateItem(seat counter)", e)),
        }
    }
}

impl TournamentStore for DynamoScoreStore {
    #[instrument(skip(self, t), fields(tournament = %t.tournament_id))]
    async fn create_tournament(&self, t: &Tournament) -> Result<Option<Tournament>, StoreError> {
        let item = TournamentItem {
            pk: TOURNAMENTS_PK.into(),
            sk: t.tournament_id.clone(),
            kind: "tournament".into(),
            definition: serde_json::to_string(t).map_err(|e| StoreError::Corrupt(e.to_string()))?,
        };
        if (self.put_new(
            serde_dynamo::to_item(item).map_err(StoreError::item)?,
            "PutItem(tournament)",
        ))
        .await?
        {
            return Ok(None);
        }
        Ok(Some(
            self.get_tournament(&t.tournament_id)
                .await?
                .unwrap_or_else(|| t.clone()),
        ))
    }

    /// The definition's put, conditional on the stored one being `old` (its JSON, as
    /// written: serde writes the same definition the same way), and the audit record,
    /// in one transaction.
    #[instrument(skip_all, fields(tournament = %new.tournament_id))]
    async fn replace_tournament(
        &self,
        old: &Tournament,
        new: &Tournament,
        audit: &AuditRecord,
    ) -> Result<bool, StoreError> {
        let json = |t: &Tournament| {
            serde_json::to_string(t).map_err(|e| StoreError::Corrupt(e.to_string()))
        };
        let item = TournamentItem {
            pk: TOURNAMENTS_PK.into(),
            sk: new.tournament_id.clone(),
            kind: "tournament".into(),
            definition: json(new)?,
        };
        // `definition` is one of DynamoDB's reserved words: named through `#d`.
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(serde_dynamo::to_item(item).map_err(StoreError::item)?))
            .condition_expression("#d = :was")
            .expression_attribute_names("#d", "definition")
            .expression_attribute_values(":was", AttributeValue::S(json(old)?))
            .build()
            .map_err(StoreError::request)?;
        let res = self
            .client
            .transact_write_items()
            .transact_items(TransactWriteItem::builder().put(put).build())
            .transact_items(self.put(
                serde_dynamo::to_item(AuditItem::of(audit)).map_err(StoreError::item)?,
                "attribute_not_exists(pk)",
                Item::new(),
            )?)
            .send()
            .await;
        match res {
            Ok(_) => Ok(true),
            Err(e) if cancellation(&e).is_some_and(|reasons| failed(&reasons, 0)) => Ok(false),
            Err(e) => Err(StoreError::call("TransactWriteItems(tournament)", e)),
        }
    }

    #[instrument(skip(self))]
    async fn get_tournament(&self, id: &str) -> Result<Option<Tournament>, StoreError> {
        let at = key(TOURNAMENTS_PK.into(), id.to_owned());
        match self.get_item(at, "GetItem(tournament)").await? {
            Some(item) => Ok(Some(
                serde_dynamo::from_item::<_, TournamentItem>(item)
                    .map_err(StoreError::item)?
                    .tournament()?,
            )),
            None => Ok(None),
        }
    }

    #[instrument(skip(self))]
    async fn list_tournaments(&self, page: Paging<'_>) -> Result<TournamentPage, StoreError> {
        let q = self.partition_page(TOURNAMENTS_PK, page);
        let (items, next) = page_of::<TournamentItem>(q, "Query(tournaments)").await?;
        let tournaments = (items.into_iter())
            .map(|t| t.tournament())
            .collect::<Result<_, StoreError>>()?;
        Ok(TournamentPage { tournaments, next })
    }

    #[instrument(skip(self))]
    async fn get_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        consistency: Consistency,
    ) -> Result<Option<Member>, StoreError> {
        let (pk, sk) = member_pk_sk(occ, player);
        let item = (self.read_item(key(pk, sk), consistency, "GetItem(member)")).await?;
        Ok(match item {
            Some(item) => Some(
                serde_dynamo::from_item::<_, MemberItem>(item)
                    .map_err(StoreError::item)?
                    .member,
            ),
            None => None,
        })
    }

    #[instrument(skip(self, member), fields(seat = member.seat))]
    async fn take_seat(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
        member: &Member,
    ) -> Result<SeatTaken, StoreError> {
        let (pk, sk) = seat_pk_sk(occ, member.seat);
        let seat = SeatItem {
            pk,
            sk,
            kind: "seat".into(),
            player: player.to_string(),
        };
        let (pk, sk) = member_pk_sk(occ, player);
        let joined = MemberItem {
            pk,
            sk,
            kind: "member".into(),
            member: member.clone(),
        };
        let absent = "attribute_not_exists(pk)";
        let res = self
            .client
            .transact_write_items()
            .transact_items(self.put(
                serde_dynamo::to_item(seat).map_err(StoreError::item)?,
                absent,
                Item::new(),
            )?)
            .transact_items(self.put(
                serde_dynamo::to_item(joined).map_err(StoreError::item)?,
                absent,
                Item::new(),
            )?)
            .send()
            .await;
        match res {
            Ok(_) => Ok(SeatTaken::Taken),
            Err(e) => match cancellation(&e) {
                Some(r) if failed(&r, 1) => Ok(SeatTaken::AlreadyJoined {
                    seat_unused: !failed(&r, 0),
                }),
                Some(r) if failed(&r, 0) => Ok(SeatTaken::SeatHeld),
                Some(r) if conflicted(&r) => Ok(SeatTaken::Busy),
                _ => Err(StoreError::call("TransactWriteItems(join)", e)),
            },
        }
    }

    #[instrument(skip(self))]
    async fn highest_seat(
        &self,
        occ: &LeaderboardId,
        seats: std::ops::Range<u64>,
    ) -> Result<Option<u64>, StoreError> {
        if seats.is_empty() {
            return Ok(None);
        }
        let (lo, hi) = (
            seat_pk_sk(occ, seats.start).1,
            seat_pk_sk(occ, seats.end - 1).1,
        );
        let (lo, hi) = (&lo, &hi);
        let last = (0..SHARDS).map(|shard| async move {
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("pk = :pk AND sk BETWEEN :lo AND :hi")
                .expression_attribute_values(":pk", AttributeValue::S(seat_partition(occ, shard)))
                .expression_attribute_values(":lo", AttributeValue::S(lo.clone()))
                .expression_attribute_values(":hi", AttributeValue::S(hi.clone()))
                .projection_expression("sk")
                .scan_index_forward(false)
                .consistent_read(true)
                .limit(1)
                .send()
                .await
                .map_err(|e| StoreError::call("Query(highest seat)", e))?;
            let sk = (out.items.unwrap_or_default().into_iter().next())
                .and_then(|mut item| item.remove("sk"))
                .and_then(|v| v.as_s().ok().cloned());
            Ok::<_, StoreError>(sk.as_deref().and_then(seat_of))
        });
        Ok(try_join_all(last).await?.into_iter().flatten().max())
    }

    #[instrument(skip(self))]
    async fn forget_member(
        &self,
        occ: &LeaderboardId,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        let Some(member) = self.get_member(occ, player, Consistency::Strong).await? else {
            return Ok(false);
        };
        let (pk, sk) = seat_pk_sk(occ, member.seat);
        let res = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(key(pk, sk)))
            .update_expression("REMOVE player")
            .condition_expression("player = :p")
            .expression_attribute_values(":p", AttributeValue::S(player.to_string()))
            .send()
            .await;
        match res {
            Ok(_) => {}
            // Already unnamed (a crash after this step), or never this player's.
            Err(e)
                if e.as_service_error()
                    .is_some_and(|s| s.is_conditional_check_failed_exception()) => {}
            Err(e) => return Err(StoreError::call("UpdateItem(seat)", e)),
        }
        let (pk, sk) = member_pk_sk(occ, player);
        self.delete_item(key(pk, sk), "DeleteItem(member)").await?;
        Ok(true)
    }

    #[instrument(skip(self))]
    async fn bump_seat_counter(
        &self,
        occ: &LeaderboardId,
        floor: u64,
    ) -> Result<Option<u64>, StoreError> {
        let n = |v: u64| AttributeValue::N(v.to_string());
        let values = Item::from([(":one".into(), n(1)), (":floor".into(), n(floor))]);
        let Some(out) = (self.update_counter(occ, "ADD n :one", "n >= :floor", values)).await?
        else {
            return Ok(None);
        };
        let next = (out.get("n"))
            .and_then(|v| v.as_n().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| StoreError::Corrupt("seat counter without n".into()))?;
        Ok(Some(next - 1))
    }

    #[instrument(skip(self))]
    async fn raise_seat_counter(&self, occ: &LeaderboardId, to: u64) -> Result<(), StoreError> {
        let values = Item::from([
            (":to".into(), AttributeValue::N(to.to_string())),
            (":kind".into(), AttributeValue::S("seat_counter".into())),
        ]);
        let (set, below) = (
            "SET n = :to, kind = :kind",
            "attribute_not_exists(n) OR n < :to",
        );
        // A counter already at least that high is what was asked for.
        self.update_counter(occ, set, below, values).await.map(drop)
    }

    #[instrument(skip(self, seats), fields(count = seats.len()))]
    async fn seat_holders(
        &self,
        occ: &LeaderboardId,
        seats: &[u64],
    ) -> Result<Vec<Option<PlayerId>>, StoreError> {
        let keys = (seats.iter())
            .map(|&s| {
                let (pk, sk) = seat_pk_sk(occ, s);
                key(pk, sk)
            })
            .collect();
        let items = self
            .batch_get(
                keys,
                Some("sk, player"),
                Consistency::Eventual,
                "BatchGetItem(seats)",
            )
            .await?;
        let text = |item: &Item, name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        let mut held = std::collections::HashMap::new();
        for item in &items {
            let seat = text(item, "sk").as_deref().and_then(seat_of);
            let player = text(item, "player").and_then(|p| PlayerId::parse(&p).ok());
            if let (Some(seat), Some(player)) = (seat, player) {
                held.insert(seat, player);
            }
        }
        Ok(seats.iter().map(|s| held.remove(s)).collect())
    }

    #[instrument(skip(self))]
    async fn get_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> Result<Option<LeagueStanding>, StoreError> {
        Ok(self.league_item(tournament, player).await?.map(|(s, _)| s))
    }

    #[instrument(skip(self, change), fields(occurrence = %change.occurrence))]
    async fn settle_league_member(
        &self,
        tournament: &str,
        player: &PlayerId,
        change: &TierChange,
    ) -> Result<bool, StoreError> {
        for _ in 0..LEAGUE_TRIES {
            let (standing, v) = match self.league_item(tournament, player).await? {
                Some((s, _)) if s.has(&change.occurrence) => return Ok(false),
                Some((s, v)) => (s, Some(v)),
                None => (LeagueStanding::default(), None),
            };
            let (pk, sk) = league_pk_sk(tournament, player);
            let item = LeagueItem {
                pk,
                sk,
                kind: "league".into(),
                standing: serde_json::to_string(&standing.with(change))
                    .map_err(|e| StoreError::Corrupt(e.to_string()))?,
                v: v.map_or(1, |v| v + 1),
            };
            let item = serde_dynamo::to_item(item).map_err(StoreError::item)?;
            let written = match v {
                None => self.put_new(item, "PutItem(league standing)").await?,
                Some(v) => {
                    let values = Item::from([(":v".into(), AttributeValue::N(v.to_string()))]);
                    (self.put_if(item, "v = :v", values, "PutItem(league standing)")).await?
                }
            };
            if written {
                return Ok(true);
            }
        }
        Err(StoreError::Contended("a league standing"))
    }

    #[instrument(skip(self))]
    async fn forget_league_standing(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> Result<bool, StoreError> {
        let (pk, sk) = league_pk_sk(tournament, player);
        let old = self
            .delete_item(key(pk, sk), "DeleteItem(league standing)")
            .await?;
        Ok(old.is_some())
    }
}

impl DynamoScoreStore {
    /// The player's standing and its version, strongly consistent.
    async fn league_item(
        &self,
        tournament: &str,
        player: &PlayerId,
    ) -> Result<Option<(LeagueStanding, u64)>, StoreError> {
        let (pk, sk) = league_pk_sk(tournament, player);
        let Some(item) = self
            .get_item(key(pk, sk), "GetItem(league standing)")
            .await?
        else {
            return Ok(None);
        };
        let item: LeagueItem = serde_dynamo::from_item(item).map_err(StoreError::item)?;
        let standing = serde_json::from_str(&item.standing)
            .map_err(|e| StoreError::Corrupt(format!("league standing {}: {e}", item.sk)))?;
        Ok(Some((standing, item.v)))
    }
}
