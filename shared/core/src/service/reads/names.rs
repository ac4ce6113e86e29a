//! Names on rows: each row's card (its player's display name, avatar and country)
//! joined at read time, never stored with the standing, so a rename shows in the next
//! read (see `docs/profiles.md`). Where a card comes from, cheapest first:
//! - the copy the index read with the rows (one round trip on a single node);
//! - the index's copies, asked in a second call: on a cluster (they live in other
//!   slots), and for friends' rows (picked after their read, from up to 500 friends);
//! - DynamoDB, one BatchGetItem per 100 rows the index holds no copy of (never filled,
//!   expired, from another replication history) or when Redis does not answer; what it
//!   answers is then copied into the index, version-checked, so a fill can never win
//!   over a newer rename.
//!
//! If DynamoDB fails too, the rows go out with null names and the reply says
//! `names_missing: true`; the ranks are right either way.
//!
//! Each row's metadata (its standing's, see `docs/profiles.md`) is joined here too: the
//! index keeps it with the entry and reads it with the rows, in the board's own keys
//! (one round trip on a cluster too); a read from DynamoDB takes it from the rows'
//! standings, one BatchGetItem per 100 rows, alongside the cards'.

use std::collections::HashMap;

use tracing::warn;

use super::reply::Entry;
use crate::service::Context;
use crate::store::{
    CardCopies, IndexReads, ProfileStore, RowCards, RowMetadata, StandingStore, VersionedCard,
};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::order::RankKey;
use leaderboard_rules::profile::Card;
use leaderboard_rules::profile::Metadata;

/// What the index read with some rows, by player: their cards (`None` for a player it
/// holds no copy of) and their metadata. Either map is absent when the index read none.
#[derive(Debug, Default)]
pub(crate) struct Known {
    cards: Option<HashMap<String, Option<VersionedCard>>>,
    metadata: Option<HashMap<String, Option<Metadata>>>,
}

impl Known {
    /// The metadata of the `rows` picked from `group` (sorted, as read: `metadata` in
    /// its order), and no cards. Friends-rank: the keys of the whole group came with
    /// their entries' metadata; the cards of the rows are asked for after.
    pub(crate) fn picked(group: &[PlayerId], metadata: RowMetadata, rows: &[Entry]) -> Self {
        let metadata = metadata.filter(|m| m.len() == group.len()).map(|m| {
            let at = |p: &str| group.binary_search_by(|g| g.as_str().cmp(p)).ok();
            (rows.iter())
                .filter_map(|r| Some((r.player_id.clone(), m[at(&r.player_id)?].clone())))
                .collect()
        });
        Self {
            cards: None,
            metadata,
        }
    }
}

/// What the index read with the rows `keys` (each in their order).
pub(crate) fn known(keys: &[RankKey], cards: RowCards, metadata: RowMetadata) -> Known {
    Known {
        cards: by_player(keys, cards),
        metadata: by_player(keys, metadata),
    }
}

/// Values read in the order of `keys`, by player (`None` unless one per key).
fn by_player<T>(keys: &[RankKey], values: Option<Vec<T>>) -> Option<HashMap<String, T>> {
    let values = values?;
    (values.len() == keys.len())
        .then(|| keys.iter().map(|k| k.player.clone()).zip(values).collect())
}

/// Puts each row's card and metadata on it. `from_index`: the rows came from the index
/// (so it is answering, and is asked for the copies it did not read with them).
/// Returns false when some cards or metadata could not be read at all (those rows keep
/// nulls).
pub(super) async fn name<S: StandingStore + ProfileStore, I: IndexReads + CardCopies>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    rows: &mut [Entry],
    known: Known,
    from_index: bool,
) -> bool {
    let players: Vec<&str> = rows.iter().map(|r| r.player_id.as_str()).collect();
    let (details, complete) = details_of(ctx, lb, &players, known, from_index).await;
    for (row, (card, md)) in rows.iter_mut().zip(details) {
        row.card = card;
        row.metadata = md.map(|m| m.to_object());
    }
    complete
}

/// Each of `players`' card and metadata on `lb`, in order (see [`name`]).
pub(crate) async fn details_of<S: StandingStore + ProfileStore, I: IndexReads + CardCopies>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    players: &[&str],
    known: Known,
    from_index: bool,
) -> (Vec<(Card, Option<Metadata>)>, bool) {
    let cards = async {
        match ctx.settings.names_on_rows {
            true => cards_of(ctx, players, known.cards, from_index).await,
            false => (vec![Card::default(); players.len()], true),
        }
    };
    let ((cards, named), (metadata, described)) = futures::join!(
        cards,
        metadata_of(ctx, lb, players, known.metadata, from_index)
    );
    (
        cards.into_iter().zip(metadata).collect(),
        named && described,
    )
}

/// The metadata of the rows of `players` on `lb`, in order: as the index read it with
/// them, else from the index's board (rows from the index), else from their standings
/// (one BatchGetItem per 100 rows); false with nones when that fails.
async fn metadata_of<S: StandingStore, I: IndexReads>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    players: &[&str],
    known: Option<HashMap<String, Option<Metadata>>>,
    from_index: bool,
) -> (Vec<Option<Metadata>>, bool) {
    if let Some(mut known) = known {
        return (
            players.iter().map(|p| known.remove(*p).flatten()).collect(),
            true,
        );
    }
    if players.is_empty() {
        return (Vec::new(), true);
    }
    let ids = players_of(players.iter().copied());
    if from_index {
        // Rows picked after their read (friends): the board's hash, one call.
        match ctx.index.row_metadata(lb, &ids).await {
            Ok(Some(found)) if found.len() == players.len() => return (found, true),
            Ok(_) => {}
            Err(error) => warn!(%error, "could not read the rows' metadata from the index"),
        }
    }
    let rows: Vec<_> = ids.into_iter().map(|p| (lb.clone(), p)).collect();
    match ctx.store.get_metadata(&rows).await {
        Ok(found) if found.len() == players.len() => (found, true),
        Ok(_) => (vec![None; players.len()], false),
        Err(error) => {
            warn!(%error, "could not read the rows' metadata; it goes out null");
            (vec![None; players.len()], false)
        }
    }
}

/// The current cards of the rows of `players`, in order (an empty card for a player
/// without a profile, or whose card could not be read: then the flag is false).
async fn cards_of<S: ProfileStore, I: CardCopies>(
    ctx: &Context<S, I>,
    players: &[&str],
    known: Option<HashMap<String, Option<VersionedCard>>>,
    from_index: bool,
) -> (Vec<Card>, bool) {
    if players.is_empty() {
        return (Vec::new(), true);
    }
    let mut found: Vec<Option<VersionedCard>> = match known {
        Some(mut known) => players.iter().map(|p| known.remove(*p).flatten()).collect(),
        None if from_index => {
            let ids = players_of(players.iter().copied());
            match ctx.index.cards(&ids).await {
                Ok(cards) if cards.len() == players.len() => cards,
                Ok(_) | Err(_) => vec![None; players.len()],
            }
        }
        None => vec![None; players.len()],
    };
    let missing: Vec<(usize, PlayerId)> = (0..players.len())
        .filter(|&i| found[i].is_none())
        .filter_map(|i| PlayerId::parse(players[i]).ok().map(|p| (i, p)))
        .collect();
    let mut complete = true;
    if !missing.is_empty() {
        let ids: Vec<PlayerId> = missing.iter().map(|(_, p)| p.clone()).collect();
        match ctx.store.get_cards(&ids).await {
            Ok(cards) => {
                if from_index {
                    let fill: Vec<(PlayerId, VersionedCard)> =
                        ids.into_iter().zip(cards.iter().cloned()).collect();
                    if let Err(error) = ctx.index.put_cards(&fill).await {
                        warn!(%error, "could not copy cards into the index");
                    }
                }
                for ((i, _), card) in missing.iter().zip(cards) {
                    found[*i] = Some(card);
                }
            }
            Err(error) => {
                warn!(%error, "could not read the rows' cards; names go out null");
                complete = false;
            }
        }
    }
    let cards = found
        .into_iter()
        .map(|c| c.map(|c| c.card).unwrap_or_default())
        .collect();
    (cards, complete)
}

/// The players of some rows (ids the index and the store gave back, valid by then).
fn players_of<'a>(ids: impl Iterator<Item = &'a str>) -> Vec<PlayerId> {
    ids.filter_map(|p| PlayerId::parse(p).ok()).collect()
}
