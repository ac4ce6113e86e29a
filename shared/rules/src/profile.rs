//! Player profiles and per-result metadata: what a row shows of a player besides the
//! score. A profile's [`Card`] (display name, avatar, country) is joined onto every row
//! at read time, never copied into standings, so a rename shows at once everywhere (see
//! `docs/profiles.md`). `attributes` are the game's small JSON object, shown only by
//! `GET /players/{p}/profile`.
//!
//! The rules, each naming the field it refuses:
//! - `display_name`: 1-32 characters after Unicode NFC (stored in NFC), no control,
//!   format, line or paragraph separator, private-use or surrogate characters, no
//!   leading or trailing white space (unassigned code points pass: they may be assigned
//!   by the next Unicode version);
//! - `avatar`: an `https://` URL (a host of `a-z 0-9 . -`, then an optional path of URL
//!   characters: no user, password or port; at most 512 bytes), or an asset id of 1-64
//!   of `A-Z a-z 0-9 _ . - /`, not starting with `/` or `.` (both exactly as the
//!   OpenAPI document's pattern says);
//! - `country`: an officially assigned ISO 3166-1 alpha-2 code, upper case;
//! - `attributes`: a JSON object of at most 1 KB (compact JSON);
//! - a result's `metadata`: a JSON object of at most 512 bytes (compact JSON).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

use crate::error::DomainError;

/// Longest display name, in characters after NFC.
pub const MAX_NAME_CHARS: usize = 32;
/// Longest avatar URL, in bytes.
pub const MAX_AVATAR_URL_BYTES: usize = 512;
/// Longest avatar asset id, in bytes.
pub const MAX_ASSET_ID_BYTES: usize = 64;
/// Largest `attributes`, in bytes of compact JSON.
pub const MAX_ATTRIBUTES_BYTES: usize = 1024;
/// Largest result `metadata`, in bytes of compact JSON.
pub const MAX_METADATA_BYTES: usize = 512;

/// ISO 3166-1 alpha-2: the officially assigned codes.
const COUNTRIES: &str = "AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL \
BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK \
DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU \
GW GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY KZ \
LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY \
MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU \
RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK TL TM TN TO \
TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM ZW";

/// What every row shows of a player: all `null` for a player without a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    pub display_name: Option<String>,
    pub avatar: Option<String>,
    pub country: Option<String>,
}

impl Card {
    /// True when the card shows nothing.
    pub fn is_empty(&self) -> bool {
        self.display_name.is_none() && self.avatar.is_none() && self.country.is_none()
    }
}

/// A player's profile: the card and the game's attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Profile {
    pub card: Card,
    pub attributes: Option<Map<String, Value>>,
}

/// The body of `PUT /players/{p}/profile` (and of a player's own `PUT /me/profile`,
/// which may not carry `attributes`). Every field is optional; a field left out is
/// `null` in the profile.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileBody {
    pub display_name: Option<String>,
    pub avatar: Option<String>,
    pub country: Option<String>,
    pub attributes: Option<Value>,
}

impl ProfileBody {
    /// The profile this body sets, every field checked; the first field that breaks a
    /// rule is the error.
    pub fn validate(self) -> Result<Profile, DomainError> {
        Ok(Profile {
            card: Card {
                display_name: self.display_name.as_deref().map(display_name).transpose()?,
                avatar: self.avatar.as_deref().map(avatar).transpose()?,
                country: self.country.as_deref().map(country).transpose()?,
            },
            attributes: self
                .attributes
                .map(|v| object("attributes", v, MAX_ATTRIBUTES_BYTES))
                .transpose()?,
        })
    }
}

/// A display name checked and put in NFC.
pub fn display_name(raw: &str) -> Result<String, DomainError> {
    text("display_name", raw, MAX_NAME_CHARS)
}

/// Text a player or operator reads (a display name, a tournament's title) checked and put
/// in NFC: 1 to `max` characters, none that hides, reorders or breaks the text, no
/// space at either end; refused with `field` named.
pub fn text(field: &'static str, raw: &str, max: usize) -> Result<String, DomainError> {
    let bad = |reason: String| DomainError::invalid(field, reason);
    let name: String = raw.nfc().collect();
    let chars = name.chars().count();
    if chars == 0 || chars > max {
        return Err(bad(format!(
            "must be 1-{max} characters after Unicode NFC (is {chars})"
        )));
    }
    if let Some(c) = name.chars().find(|&c| refused_in_name(c)) {
        return Err(bad(format!(
            "contains U+{:04X}, a control, format, line separator or private-use character",
            c as u32
        )));
    }
    if name.starts_with(char::is_whitespace) || name.ends_with(char::is_whitespace) {
        return Err(bad("must not start or end with a space".into()));
    }
    Ok(name)
}

/// A display name as a search finds it: compatibility-decomposed (NFKD), accents and
/// other combining marks dropped, lower-cased, white space runs as one space, in NFC.
/// `Zoë  Ångström`, `ZOE ANGSTROM` and `ｚｏｅ angström` all give `zoe angstrom`; a
/// prefix of it finds every name that starts so (docs/console.md).
pub fn search_key(name: &str) -> String {
    let folded: String = (name.nfkd())
        .filter(|c| !is_mark(*c))
        .flat_map(char::to_lowercase)
        .collect();
    let spaced = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    spaced.nfc().collect()
}

/// A combining mark (an accent, a diacritic) of any kind.
fn is_mark(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::NonspacingMark
            | GeneralCategory::SpacingMark
            | GeneralCategory::EnclosingMark
    )
}

/// Characters a name may not hold: they hide, reorder or break the text around them
/// (bidi overrides, zero-width joiners and the like are format characters).
fn refused_in_name(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
    )
}

/// An avatar checked: an https URL or an asset id.
pub fn avatar(raw: &str) -> Result<String, DomainError> {
    let ok = match raw.strip_prefix("https://") {
        Some(rest) => raw.len() <= MAX_AVATAR_URL_BYTES && https_rest(rest),
        None => asset_id(raw),
    };
    if !ok {
        return Err(DomainError::invalid(
            "avatar",
            "must be an https URL (https://, a host of a-z 0-9 . -, then an optional path \
             of URL characters; at most 512 bytes) or an asset id (1-64 of A-Z a-z 0-9 _ . \
             - /, not starting with . or /)",
        ));
    }
    Ok(raw.to_owned())
}

/// After `https://`: a host (lower-case letters, digits, `.` and `-`, starting with a
/// letter or digit, at most 253), then nothing or a path of URL characters (no user,
/// password or port: nothing before the host, no `:` in it).
fn https_rest(rest: &str) -> bool {
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let host_ok = (1..=253).contains(&host.len())
        && host.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && host
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '-'));
    let path_ok = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "._~%!$&'()*+,;=:@/?-".contains(c));
    host_ok && path_ok
}

/// 1-64 of `A-Z a-z 0-9 _ . - /`, not starting with `.` or `/`.
fn asset_id(raw: &str) -> bool {
    (1..=MAX_ASSET_ID_BYTES).contains(&raw.len())
        && !raw.starts_with(['/', '.'])
        && raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
}

/// A country checked: an ISO 3166-1 alpha-2 code.
pub fn country(raw: &str) -> Result<String, DomainError> {
    let known = raw.len() == 2
        && raw.bytes().all(|b| b.is_ascii_uppercase())
        && COUNTRIES.split(' ').any(|c| c == raw);
    if !known {
        return Err(DomainError::invalid(
            "country",
            format!("{raw:?} is not an ISO 3166-1 alpha-2 code (upper case, e.g. SE)"),
        ));
    }
    Ok(raw.to_owned())
}

/// A result's metadata checked: a JSON object of at most [`MAX_METADATA_BYTES`].
pub fn metadata(value: Value) -> Result<Map<String, Value>, DomainError> {
    object("metadata", value, MAX_METADATA_BYTES)
}

/// A result's metadata (a replay id, a car, a loadout), kept as its compact JSON text:
/// what DynamoDB and Redis store and a row shows. Compact JSON escapes every control
/// character, so the text never holds the separator Redis keeps it behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata(String);

impl Metadata {
    /// A request's `metadata`, checked (see [`metadata`]).
    pub fn parse(value: Value) -> Result<Self, DomainError> {
        let map = metadata(value)?;
        Ok(Self(Value::Object(map).to_string()))
    }

    /// Stored text, as written by [`Metadata::parse`]: an object's compact JSON. Not
    /// parsed here (every row a read or the projector decodes passes through): text that
    /// cannot be an object is none, and [`Metadata::to_object`] parses once, for a reply.
    pub fn stored(text: &str) -> Option<Self> {
        text.starts_with('{').then(|| Self(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The object, for a reply.
    pub fn to_object(&self) -> Map<String, Value> {
        match serde_json::from_str(&self.0) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// A short fingerprint of the text, kept in a result's receipt so that a retry of
    /// the match with other metadata is told apart from a true retry.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        Sha256::digest(self.0.as_bytes())[..6]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// `value` as a JSON object of at most `limit` bytes of compact JSON.
fn object(
    field: &'static str,
    value: Value,
    limit: usize,
) -> Result<Map<String, Value>, DomainError> {
    let Value::Object(map) = value else {
        return Err(DomainError::invalid(field, "must be a JSON object"));
    };
    let size = serde_json::to_string(&map).map_or(usize::MAX, |s| s.len());
    if size > limit {
        return Err(DomainError::invalid(
            field,
            format!("is {size} bytes as compact JSON; at most {limit}"),
        ));
    }
    Ok(map)
}

#[cfg(test)]
mod tests;
