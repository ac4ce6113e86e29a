//! Stream records decoded: the table's images of standings turned into index entries.
//!
//! Only players' rows project; boards, receipts and the rest are skipped:
//! - INSERT or MODIFY of a standing (`kind = "standing"`): the standing, at its version;
//! - INSERT or MODIFY of a removed standing's tombstone (`kind = "removed"`): the removal,
//!   at its version, which the index remembers so that no older record brings it back;
//! - REMOVE of either (an erasure deletes the row): the erasure, at the old image's
//!   version, which takes the player off the index without leaving anything behind;
//! - INSERT or MODIFY of a profile (`kind = "profile"`): the player's card, at the
//!   profile's version, which the index copies unless it holds a newer one;
//! - INSERT of a held result's queue item (`kind = "held"`): the result, for its
//!   `leaderboard.result.held` event (docs/integrity.md);
//! - a MODIFY that leaves the row's kind and version as they were (a result that did not
//!   change the standing, only added its receipt to the row) asks nothing: skipped.
//!
//! A record whose image cannot be decoded is poison: retrying cannot fix it, so it is
//! counted and logged, never allowed to block the shard.

use aws_lambda_events::event::dynamodb::EventRecord;
use tracing::error;

use super::items::Slot;
use leaderboard_core::store::{EntryKind, IndexEntry, StreamBatch, VersionedCard};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::profile::Card;

/// What one record asks of the index.
#[derive(Debug)]
enum Change {
    Apply(IndexEntry),
    /// A profile written: its card, copied into the index (version-checked).
    Card(PlayerId, VersionedCard),
    /// A result held for review joined the queue: its event goes on the bus.
    Held(Box<leaderboard_core::store::HeldResult>),
    Skip,
    Poison(String),
}

fn change_of(
    event_name: &str,
    new_image: serde_dynamo::Item,
    old_image: serde_dynamo::Item,
) -> Change {
    let (image, deleted) = match event_name {
        "MODIFY" if same_row_version(&new_image, &old_image) => return Change::Skip,
        "INSERT" | "MODIFY" => (new_image, false),
        "REMOVE" => (old_image, true),
        _ => return Change::Skip,
    };
    let kind = match image.get("kind") {
        Some(serde_dynamo::AttributeValue::S(k)) => k.clone(),
        _ => return Change::Skip,
    };
    if kind == "held" {
        // Only its arrival is news; its removal is a decision, audited.
        if event_name != "INSERT" {
            return Change::Skip;
        }
        return match super::held::held_of(image) {
            Ok(held) => Change::Held(Box::new(held)),
            Err(e) => Change::Poison(e),
        };
    }
    if kind == "profile" {
        // A profile is never deleted (an erasure writes an empty one), so a REMOVE
        // asks nothing.
        if deleted {
            return Change::Skip;
        }
        return match card_of(image) {
            Ok(Some((player, card))) => Change::Card(player, card),
            Ok(None) => Change::Skip,
            Err(e) => Change::Poison(e),
        };
    }
    // The image is owned: decoded in place, never copied.
    match Slot::decode(Some(&kind), image) {
        Ok(Some(slot)) if deleted => Change::Apply(slot.removal(EntryKind::Erased)),
        Ok(Some(slot)) => Change::Apply(slot.index_entry()),
        Ok(None) => Change::Skip,
        Err(e) => Change::Poison(e.to_string()),
    }
}

/// A profile image's player and card.
fn card_of(image: serde_dynamo::Item) -> Result<Option<(PlayerId, VersionedCard)>, String> {
    #[derive(serde::Deserialize)]
    struct CardImage {
        pk: String,
        version: u64,
        #[serde(flatten)]
        card: Card,
    }
    let item: CardImage = serde_dynamo::from_item(image).map_err(|e| e.to_string())?;
    let Some(player) = item.pk.strip_prefix("P#") else {
        return Ok(None);
    };
    let player = PlayerId::parse(player).map_err(|e| e.to_string())?;
    let card = VersionedCard {
        version: item.version,
        card: item.card,
    };
    Ok(Some((player, card)))
}

/// Whether both images are the same kind of row at the same version.
fn same_row_version(new: &serde_dynamo::Item, old: &serde_dynamo::Item) -> bool {
    let same = |name: &str| new.get(name).is_some() && new.get(name) == old.get(name);
    same("kind") && same("version")
}

/// Picks the standings out of stream records (skipping other items and logging poison).
pub fn decode(records: Vec<EventRecord>) -> StreamBatch {
    let mut out = StreamBatch::default();
    for record in records {
        let EventRecord {
            event_id,
            event_name,
            change,
            ..
        } = record;
        let sequence_number = change.sequence_number;
        // A record without the time decodes as the epoch: not a time to measure by.
        let written = change.approximate_creation_date_time.timestamp_millis();
        if written > 0 {
            out.oldest_at_ms = Some(out.oldest_at_ms.map_or(written, |o| o.min(written)));
        }
        match change_of(&event_name, change.new_image, change.old_image) {
            Change::Apply(entry) => {
                out.entries.push(entry);
                out.sequence_numbers.push(sequence_number);
            }
            Change::Card(player, card) => {
                out.cards.push((player, card));
                out.card_sequence_numbers.push(sequence_number);
            }
            Change::Held(held) => {
                out.held.push(*held);
                out.held_sequence_numbers.push(sequence_number);
            }
            Change::Skip => out.skipped += 1,
            Change::Poison(reason) => {
                out.poison += 1;
                error!(
                    %event_id,
                    sequence_number = sequence_number.as_deref().unwrap_or("?"),
                    %reason,
                    poison = true,
                    "skipping a stream record that cannot be decoded"
                );
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::dynamodb::StandingItem;
    use leaderboard_rules::board::Standing;
    use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
    use leaderboard_rules::order::Direction;
    use leaderboard_rules::score::Score;

    fn image(version: u64, score: i64) -> serde_dynamo::Item {
        let s = Standing {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            metadata: None,
            score: Score::new("score", score).unwrap(),
            reached_at: 1,
            version,
            last_match_id: MatchId::parse("m").unwrap(),
        };
        let lb = LeaderboardId::parse("b").unwrap();
        let p = PlayerId::parse("p").unwrap();
        serde_dynamo::to_item(StandingItem::new(&lb, &p, Direction::Desc, &s, None)).unwrap()
    }

    #[test]
    fn a_row_rewritten_at_the_same_version_asks_nothing_of_the_index() {
        // A result that did not change the standing: only the row's receipts moved.
        let same = change_of("MODIFY", image(3, 10), image(3, 10));
        assert!(matches!(same, Change::Skip), "{same:?}");
        let moved = change_of("MODIFY", image(4, 20), image(3, 10));
        assert!(matches!(moved, Change::Apply(e) if e.version == 4));
        let first = change_of("INSERT", image(1, 10), serde_dynamo::Item::default());
        assert!(matches!(first, Change::Apply(e) if e.version == 1));
    }

    #[test]
    fn a_profile_record_copies_its_card_and_its_removal_asks_nothing() {
        let image: serde_dynamo::Item = serde_dynamo::to_item(serde_json::json!({
            "pk": "P#ada", "sk": "PROFILE", "kind": "profile", "version": 3,
            "display_name": "Ada", "country": "SE",
        }))
        .unwrap();
        match change_of("MODIFY", image.clone(), serde_dynamo::Item::default()) {
            Change::Card(p, c) => {
                assert_eq!((p.as_str(), c.version), ("ada", 3));
                assert_eq!(c.card.display_name.as_deref(), Some("Ada"));
                assert_eq!(c.card.avatar, None);
            }
            other => panic!("{other:?}"),
        }
        let removed = change_of("REMOVE", serde_dynamo::Item::default(), image);
        assert!(matches!(removed, Change::Skip), "{removed:?}");
    }
}
