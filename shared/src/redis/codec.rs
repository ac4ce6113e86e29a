//! The Rust side of the index's value formats: markers' states, sorted-set entries and
//! hash values decoded (the arguments scripts take are built in `calls`).

use crate::order::{Direction, RankKey};
use crate::store::Health;
use crate::store::IndexError;

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

/// Parses a hash value `version[:stamp]|zscore|member` into its key.
pub(super) fn decode_hash_value(dir: Direction, value: &str) -> Option<RankKey> {
    let mut parts = value.splitn(3, '|');
    let _version = parts.next()?;
    let zscore: f64 = parts.next()?.parse().ok()?;
    RankKey::from_entry(dir, parts.next()?, zscore)
}

/// Card copies as the scripts return them (`'version|card JSON'`, or nil for none).
pub(super) type RawCards = Option<Vec<Option<String>>>;

/// Card copies decoded; an undecodable copy counts as none (the reader fills it again).
pub(super) fn decode_cards(raw: RawCards) -> crate::store::RowCards {
    raw.map(|cards| {
        cards
            .into_iter()
            .map(|c| c.and_then(|c| decode_card(&c)))
            .collect()
    })
}

/// One card copy, `'version|card JSON'`.
pub(super) fn decode_card(raw: &str) -> Option<crate::store::VersionedCard> {
    let (version, card) = raw.split_once('|')?;
    Some(crate::store::VersionedCard {
        version: version.parse().ok()?,
        card: serde_json::from_str(card).ok()?,
    })
}
