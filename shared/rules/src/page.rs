//! A page's size as a list read asks for it (`limit`, within the list's bounds), and
//! where a page of a listing starts ([`Paging`]).

use crate::error::DomainError;

/// Parses a page's `limit`: 1..=`max`, `default` when absent.
pub fn limit_within(raw: Option<&str>, default: u64, max: u64) -> Result<u64, DomainError> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    raw.parse::<u64>()
        .ok()
        .filter(|l| (1..=max).contains(l))
        .ok_or_else(|| DomainError::invalid("limit", format!("must be 1 to {max}")))
}

/// One page of a listing in its key order: strictly after the key `after` (from the
/// listing's start when `None`), at most `limit` items. The next page starts after the
/// key the last one answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging<'a> {
    pub after: Option<&'a str>,
    pub limit: u32,
}

impl<'a> Paging<'a> {
    #[must_use]
    pub const fn new(after: Option<&'a str>, limit: u32) -> Self {
        Self { after, limit }
    }
}

#[cfg(test)]
mod tests {
    use super::limit_within;

    #[test]
    fn a_limit_is_one_to_its_max_and_its_default_when_absent() {
        assert_eq!(limit_within(None, 25, 100).unwrap(), 25);
        assert_eq!(limit_within(Some("1"), 25, 100).unwrap(), 1);
        assert_eq!(limit_within(Some("100"), 25, 100).unwrap(), 100);
        for refused in ["0", "101", "-1", "x", ""] {
            assert!(limit_within(Some(refused), 25, 100).is_err(), "{refused}");
        }
    }
}
