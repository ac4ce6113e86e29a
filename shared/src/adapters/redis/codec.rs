//! The Rust side of the index's value formats: markers' states, sorted-set entries and
//! hash values decoded (the arguments scripts take are built in `calls`).

use leaderboard_core::store::Health;
use leaderboard_core::store::IndexError;
use leaderboard_rules::order::{Direction, RankKey};

pub(super) fn health_of(state: &str) -> Health {
    match state {
        "ok" => Health::Ready,
        "rebuilding" => Health::Rebuilding,
        "stale" => Health::Stale,
        _ => Health::Missing,
    }
}

/// Reads may only use a board whose marker says it is complete.
pub(super) fn ready(state: &str) -> Result<(), IndexError> {
    match health_of(state) {
        Health::Ready => Ok(()),
        other => Err(IndexError::NotReady(other)),
    }
}

/// Entries with their sorted-set scores, as ZRANGE WITHSCORES returns them.
pub(super) type Flat = Vec<(String, f64)>;

pub(super) fn reply_err(what: &str) -> IndexError {
    IndexError::Reply(what.to_owned())
}

pub(super) fn decode_entries(dir: Direction, flat: Flat) -> Result<Vec<RankKey>, IndexError> {
    flat.into_iter()
        .map(|(member, z)| {
            RankKey::from_entry(dir, &member, z).ok_or_else(|| reply_err("undecodable member"))
        })
        .collect()
}

/// Parses a hash value `version[:stamp]|zscore|member[\x1emetadata]` into its key.
pub(super) fn decode_hash_value(dir: Direction, value: &str) -> Option<RankKey> {
    let value = value.split('\u{1e}').next()?;
    let mut parts = value.splitn(3, '|');
    let _version = parts.next()?;
    let zscore: f64 = parts.next()?.parse().ok()?;
    RankKey::from_entry(dir, parts.next()?, zscore)
}

/// Rows' metadata as the scripts return them: one string per row, empty for none (nil
/// when not sent).
pub(super) type RawMetadata = Option<Vec<String>>;

/// The metadata after a hash value (`decode_hash_value`), if any.
pub(super) fn metadata_in(value: &str) -> Option<leaderboard_rules::profile::Metadata> {
    let (_, md) = value.split_once('\u{1e}')?;
    leaderboard_rules::profile::Metadata::stored(md)
}

/// Rows' metadata decoded; unreadable text counts as none.
pub(super) fn decode_metadata(raw: RawMetadata) -> leaderboard_core::store::RowMetadata {
    raw.map(|all| {
        all.iter()
            .map(|md| leaderboard_rules::profile::Metadata::stored(md))
            .collect()
    })
}

/// Card copies as the scripts return them (see [`decode_card`]; nil for none).
pub(super) type RawCards = Option<Vec<Option<String>>>;

/// Joins a card copy's parts: no field may hold it (the rules refuse control characters).
const UNIT: char = '\u{1f}';

/// A card's fields as the copy keeps them after its version: display name, avatar and
/// country joined by [`UNIT`], an empty one for null (no field may be empty).
pub(super) fn encode_card(card: &leaderboard_rules::profile::Card) -> String {
    let field = |f: &Option<String>| f.clone().unwrap_or_default();
    [
        field(&card.display_name),
        field(&card.avatar),
        field(&card.country),
    ]
    .join(&UNIT.to_string())
}

/// Card copies decoded; an undecodable copy counts as none (the reader fills it again).
pub(super) fn decode_cards(raw: RawCards) -> leaderboard_core::store::RowCards {
    raw.map(|cards| {
        cards
            .into_iter()
            .map(|c| c.and_then(|c| decode_card(&c)))
            .collect()
    })
}

/// One card copy: its version, then the fields of [`encode_card`], joined by [`UNIT`].
pub(super) fn decode_card(raw: &str) -> Option<leaderboard_core::store::VersionedCard> {
    let mut parts = raw.split(UNIT);
    let version = parts.next()?.parse().ok()?;
    let mut field = || parts.next().map(|f| (!f.is_empty()).then(|| f.to_owned()));
    let card = leaderboard_rules::profile::Card {
        display_name: field()?,
        avatar: field()?,
        country: field()?,
    };
    Some(leaderboard_core::store::VersionedCard { version, card })
}

#[cfg(test)]
mod card_tests {
    use super::*;
    use leaderboard_rules::profile::Card;

    #[test]
    fn a_card_copy_round_trips_with_nulls_and_any_text() {
        let card = Card {
            display_name: Some("Zoë | 北京 🙂".into()),
            avatar: None,
            country: Some("SE".into()),
        };
        let raw = format!("7{UNIT}{}", encode_card(&card));
        let back = decode_card(&raw).unwrap();
        assert_eq!((back.version, back.card), (7, card));
        let none = decode_card(&format!("0{UNIT}{}", encode_card(&Card::default()))).unwrap();
        assert!(none.card.is_empty());
        assert!(
            decode_card("7").is_none(),
            "a copy without its fields is none"
        );
    }
}
