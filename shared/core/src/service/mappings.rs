//! Managing event sources' schema mappings (server-only): `PUT /admin/mappings/{source}`
//! stores a new version when the mapping changes (the same mapping again is a no-op),
//! `GET /admin/mappings/{source}[?version=]` reads the current or an older version.

use serde_json::Value;

use super::boards::Created;
use crate::service::ServiceError;
use crate::store::MappingStore;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::mapping::Mapping;
use leaderboard_rules::score::MAX_ABS_SCORE;
use leaderboard_rules::window::parse_name;

/// Reads `body` as the mapping of `source` (the path names the source; a `source` in
/// the body must agree), validates it, and stores it as the next version. A `version` in
/// the body is the version the caller expects to replace... plus one: the change is
/// refused with `mapping_conflict` unless the source is at `version - 1`.
pub async fn put_mapping<S: MappingStore>(
    store: &S,
    source: &str,
    body: Value,
) -> Result<Created<Mapping>, ServiceError> {
    let mapping = match next_version(store, source, body).await? {
        Created::Existing(current) => return Ok(Created::Existing(current)),
        Created::New(mapping) => mapping,
    };
    let at = mapping.version - 1;
    if !store.put_mapping(&mapping).await? {
        // Another change took this version between the read and the write.
        return Err(ServiceError::MappingConflict {
            name: source.to_owned(),
            current: at + 1,
            expected: at,
        });
    }
    Ok(Created::New(mapping))
}

/// What [`put_mapping`] would store, checked the same way, stored nowhere: the
/// console's editor validates a mapping with it before saving
/// (`PUT /admin/mappings/{source}?dry_run=true`).
pub async fn check_mapping<S: MappingStore>(
    store: &S,
    source: &str,
    body: Value,
) -> Result<Mapping, ServiceError> {
    match next_version(store, source, body).await? {
        Created::Existing(m) | Created::New(m) => Ok(m),
    }
}

/// The mapping `body` makes the next version of `source` (`Existing`: the current one
/// already is it).
async fn next_version<S: MappingStore>(
    store: &S,
    source: &str,
    mut body: Value,
) -> Result<Created<Mapping>, ServiceError> {
    parse_name("source", source)?;
    let Some(fields) = body.as_object_mut() else {
        return Err(DomainError::invalid("body", "must be a JSON object").into());
    };
    if let Some(v) = fields.get("version") {
        version_in_range(v.as_u64())?;
    }
    match fields.get("source") {
        None => {
            fields.insert("source".into(), Value::from(source));
        }
        Some(Value::String(s)) if s == source => {}
        Some(_) => {
            return Err(DomainError::invalid("source", "must be the source the path names").into());
        }
    }
    let mapping: Mapping =
        serde_json::from_value(body).map_err(|e| DomainError::invalid("body", e.to_string()))?;
    let mut mapping = mapping.validated()?;
    let expected = mapping.version;
    let current = store.get_mapping(source).await?;
    let at = current.as_ref().map_or(0, |m| m.version);
    if expected != 0 && expected != at + 1 {
        return Err(ServiceError::MappingConflict {
            name: source.to_owned(),
            current: at,
            expected: expected - 1,
        });
    }
    if let Some(current) = current {
        mapping.version = current.version;
        if mapping == current {
            return Ok(Created::Existing(current));
        }
    }
    mapping.version = at + 1;
    Ok(Created::New(mapping))
}

/// A version as a caller may name one: 1 to 2^53-1 (openapi.yaml).
fn version_in_range(v: Option<u64>) -> Result<u64, DomainError> {
    v.filter(|v| (1..=MAX_ABS_SCORE as u64).contains(v))
        .ok_or_else(|| DomainError::invalid("version", "must be an integer from 1 to 2^53-1"))
}

/// The source's current mapping, or the version asked for.
pub async fn get_mapping<S: MappingStore>(
    store: &S,
    source: &str,
    version: Option<&str>,
) -> Result<Mapping, ServiceError> {
    parse_name("source", source)?;
    let found = match version {
        None => store.get_mapping(source).await?,
        Some(v) => {
            let v = version_in_range(v.parse::<u64>().ok())?;
            store.get_mapping_version(source, v).await?
        }
    };
    found.ok_or_else(|| ServiceError::MappingNotFound(source.to_owned()))
}
