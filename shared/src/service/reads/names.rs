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

use std::collections::HashMap;

use tracing::warn;

use super::reply::Entry;
use crate::ids::PlayerId;
use crate::order::RankKey;
use crate::profile::Card;
use crate::service::Context;
use crate::store::{RankIndex, RowCards, ScoreStore, VersionedCard};

/// The cards the index read with some rows, by player (`None`: it holds no copy).
pub(crate) type Known = HashMap<String, Option<VersionedCard>>;

/// The cards read with `keys`, by player; `None` when the index read none with them.
pub(crate) fn known(keys: &[RankKey], cards: RowCards) -> Option<Known> {
    let cards = cards?;
    (cards.len() == keys.len()).then(|| keys.iter().map(|k| k.player.clone()).zip(cards).collect())
}

/// Puts each row's card on it. `from_index`: the rows came from the index (so it is
/// answering, and is asked for the copies it did not read with them). Returns false
/// when some cards could not be read at all (their rows keep null names).
pub(super) async fn name<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    rows: &mut [Entry],
    known: Option<Known>,
    from_index: bool,
) -> bool {
    if !ctx.settings.names_on_rows {
        return true;
    }
    let players: Vec<&str> = rows.iter().map(|r| r.player_id.as_str()).collect();
    let (cards, complete) = cards_of(ctx, &players, known, from_index).await;
    for (row, card) in rows.iter_mut().zip(cards) {
        row.card = card;
    }
    complete
}

/// The current cards of the rows of `players`, in order (an empty card for a player
/// without a profile, or whose card could not be read: then the flag is false).
pub(crate) async fn cards_of<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    players: &[&str],
    known: Option<Known>,
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
