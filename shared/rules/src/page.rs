//! A page's size as a list read asks for it: `limit`, within the list's bounds.

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
