//! Validated identifiers: leaderboard, player and match ids.
//!
//! Every id that reaches a store or a Redis key went through [`parse_id`], so ids are
//! non-empty, at most [`MAX_ID_LEN`] bytes, and use only `[A-Za-z0-9_.:-]`. That keeps
//! DynamoDB keys, Redis keys (`{lb}` hash tags) and sorted-set members unambiguous.
//! Every such id also travels in a URL path unchanged, except the dot segments `.` and
//! `..`, which every HTTP client normalises away (`/players/../rank` becomes `/rank`):
//! they are refused, so no board or player exists that could never be read.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::DomainError;

/// Longest id accepted, in bytes.
pub const MAX_ID_LEN: usize = 128;
/// The longest short id ([`parse_slug`]).
pub const MAX_SLUG_LEN: usize = 64;

/// A short id as a request names it (`field`: where): 1-64 of `A-Z a-z 0-9 _ -`, e.g. a
/// tournament's or a league reward's.
pub fn parse_slug(field: &'static str, raw: &str) -> Result<String, DomainError> {
    let ok = !raw.is_empty()
        && raw.len() <= MAX_SLUG_LEN
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if !ok {
        return Err(DomainError::invalid(
            field,
            format!("must be 1-{MAX_SLUG_LEN} of A-Z a-z 0-9 _ -"),
        ));
    }
    Ok(raw.to_owned())
}

/// Checks one id field; `field` names it in the error the client sees.
pub fn parse_id(field: &'static str, raw: &str) -> Result<String, DomainError> {
    if raw.is_empty() {
        return Err(DomainError::invalid(field, "must not be empty"));
    }
    // A reset's archive may pass a board's length by its suffix.
    let measured = match field == "leaderboard_id" && is_archive_id(raw) {
        true => raw
            .rsplit_once(ARCHIVE_MARK)
            .map_or(raw, |(board, _)| board),
        false => raw,
    };
    if measured.len() > MAX_ID_LEN {
        return Err(DomainError::invalid(
            field,
            format!("must be at most {MAX_ID_LEN} characters"),
        ));
    }
    if raw == "." || raw == ".." {
        return Err(DomainError::invalid(
            field,
            "must not be . or .. (a URL path cannot carry them)",
        ));
    }
    if let Some(bad) = raw
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')))
    {
        return Err(DomainError::invalid(
            field,
            format!("contains {bad:?}; allowed characters are A-Z a-z 0-9 _ . : -"),
        ));
    }
    Ok(raw.to_owned())
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// Validates `raw` (see the module docs for the rules).
            pub fn parse(raw: &str) -> Result<Self, DomainError> {
                parse_id($field, raw).map(Self)
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(d)?;
                Self::parse(&raw).map_err(serde::de::Error::custom)
            }
        }
    };
}

id_type!(
    /// A leaderboard id, e.g. `g1:ranked:GLOBAL:ALL_TIME`.
    LeaderboardId,
    "leaderboard_id"
);
id_type!(
    /// A player id as the game knows it.
    PlayerId,
    "player_id"
);
id_type!(
    /// The game server's id for one match result; the idempotency key with board and player.
    MatchId,
    "match_id"
);

/// Redis Cluster's hash slots, 0 to 16,383.
pub const CLUSTER_SLOTS: u16 = 16_384;

/// What every reset archive's id ends with, before its number.
const ARCHIVE_MARK: &str = ".reset-";

/// Whether `raw` names a reset's archive (`{board}.reset-{digits}`, a board reset's):
/// such ids are kept for archives, and creating a board with one is refused.
pub fn is_archive_id(raw: &str) -> bool {
    raw.rsplit_once(ARCHIVE_MARK).is_some_and(|(board, n)| {
        !board.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    })
}

impl LeaderboardId {
    /// The id of `lb`'s `n`th reset's archive. An archive's id may pass the length a
    /// board's may have by its suffix.
    pub fn archive(lb: &Self, n: u32) -> Self {
        Self(format!("{lb}{ARCHIVE_MARK}{n}"))
    }

    /// The Redis Cluster hash slot this board's keys live in: CRC16 (XMODEM) of their
    /// hash tag modulo [`CLUSTER_SLOTS`]. Every key of a board carries the tag `{<board>}`
    /// whatever its prefix, and a board id holds no braces, so the tag is the id itself.
    /// A pure function of the id: the repair groups boards by it and the in-memory index
    /// answers the same slots as a cluster.
    pub fn cluster_slot(&self) -> u16 {
        crc16::State::<crc16::XMODEM>::calculate(self.as_str().as_bytes()) % CLUSTER_SLOTS
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_boards_slot_is_the_one_redis_gives_its_hash_tag() {
        // `CLUSTER KEYSLOT foo` is 12182 and `CLUSTER KEYSLOT 123456789` 12739 on any Redis.
        for (id, slot) in [("foo", 12_182), ("123456789", 12_739)] {
            assert_eq!(LeaderboardId::parse(id).unwrap().cluster_slot(), slot);
        }
    }

    #[test]
    fn accepts_the_documented_alphabet() {
        assert!(PlayerId::parse("Az09_.:-").is_ok());
        assert!(PlayerId::parse(&"x".repeat(MAX_ID_LEN)).is_ok());
    }

    #[test]
    fn rejects_empty_long_and_foreign_characters() {
        for bad in ["", "a b", "a/b", "a{b}", "é", "a#b"] {
            assert!(PlayerId::parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(PlayerId::parse(&"x".repeat(MAX_ID_LEN + 1)).is_err());
    }

    #[test]
    fn refuses_the_dot_segments_a_url_path_cannot_carry() {
        for bad in [".", ".."] {
            let err = LeaderboardId::parse(bad).unwrap_err();
            assert!(err.to_string().contains("URL path"), "{err}");
            assert!(PlayerId::parse(bad).is_err());
        }
        for fine in ["...", ".a", "a..b", "a."] {
            assert!(PlayerId::parse(fine).is_ok(), "{fine:?} was refused");
        }
    }

    #[test]
    fn deserializing_validates() {
        assert!(serde_json::from_str::<MatchId>("\"m-1\"").is_ok());
        assert!(serde_json::from_str::<MatchId>("\"m 1\"").is_err());
    }
}
