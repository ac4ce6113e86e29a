//! The rules' error, at the bottom of the crate: [`DomainError`], for input the rules
//! refuse. The layers above keep their own: the adapters' in `store::error`
//! (`StoreError`, `IndexError`, `FriendsError`, `QueueError`), the use cases'
//! `ServiceError` in `service::error`, cold start's `InitError` in `wiring`. Which
//! HTTP status and stable code a client sees is decided in one place, `http`.

use std::borrow::Cow;

use thiserror::Error;

/// Where in a request a refused value is: a body field's path (`schedules[0].time_zone`,
/// `league.tiers[1].promote`), a query or path parameter's name (`k`, `lb`), or a
/// header's (`Authorization`). Clients show an error beside the field it names.
pub type Field = Cow<'static, str>;

/// Input that breaks a rule. Nothing was changed when one of these is returned.
#[derive(Debug, Error)]
pub enum DomainError {
    /// A field is missing, mistyped or outside its allowed values.
    #[error("{field}: {reason}")]
    Invalid { field: Field, reason: String },
    /// A score (or a SUM total) outside ±(2^53-1), the range that stays exact everywhere,
    /// counted in units of the board's last decimal place.
    #[error(
        "{field}: {value} is outside the allowed range: ±9007199254740991 units of the \
         board's last decimal place (±9007199254740991 on an integer board)"
    )]
    ScoreOutOfRange { field: &'static str, value: String },
    /// A score with more decimal places than its board keeps (never rounded).
    #[error(
        "{field}: more decimal places than this leaderboard keeps ({allowed}); it never rounds"
    )]
    TooManyDecimals { field: &'static str, allowed: u8 },
    /// A result whose `subscores` do not give one value per tie-break column of its
    /// board (docs/tiebreaks.md): well formed, refused by the board's settings (422).
    #[error(
        "subscores: this leaderboard breaks ties by {expected} column(s) and takes exactly \
         that many values; {got} given"
    )]
    SubscoresMismatch { expected: usize, got: usize },
    /// A result's `op` its board's policy does not take (`incr` is SUM's; docs/api.md).
    #[error("op: {op} is not taken by a {policy} leaderboard")]
    OpNotAllowed {
        op: &'static str,
        policy: &'static str,
    },
    /// The body's bytes are not JSON at all (a JSON body of the wrong shape is
    /// [`DomainError::Invalid`], naming the field).
    #[error("request body is not JSON: {0}")]
    MalformedJson(#[source] serde_json::Error),
    /// The body exceeds the route's limit.
    #[error("request body is larger than {limit} bytes")]
    BodyTooLarge { limit: usize },
    /// A paging cursor that this service did not issue for this read, or that was altered.
    #[error("cursor is not valid for this read")]
    InvalidCursor,
    /// `event_ts` further in the future than the allowed clock skew.
    #[error("event_ts is more than {skew_ms} ms in the future")]
    EventInFuture { skew_ms: i64 },
    /// `rank_mode=dense` on a board created without dense ranks: a well-formed read
    /// the board's settings refuse (422).
    #[error("rank_mode: dense is not kept for this leaderboard (created with dense_ranks false)")]
    DenseNotKept,
    /// Integrity rules each well formed that cannot hold (a gain not above 0, a range
    /// upside down): 422 naming the rule (docs/integrity.md).
    #[error("{field}: {reason}")]
    IntegrityRule { field: &'static str, reason: String },
    /// A change of a definition that it cannot take (a league's tiers renamed, a league
    /// on a tournament that is not one): well formed, refused by what is stored (422).
    #[error("{field}: {reason}")]
    NotChangeable { field: &'static str, reason: String },
    /// The same item twice in a list that takes each once (a player in one match): well
    /// formed, refused (422).
    #[error("{field}: {reason}")]
    Repeated { field: Field, reason: String },
}

impl DomainError {
    pub fn invalid(field: impl Into<Field>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The field this error names (`body` for a body that is not JSON); `None` only for
    /// a body too large (413).
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Invalid { field, .. } => Some(field),
            Self::ScoreOutOfRange { field, .. } | Self::TooManyDecimals { field, .. } => {
                Some(field)
            }
            Self::SubscoresMismatch { .. } => Some("subscores"),
            Self::OpNotAllowed { .. } => Some("op"),
            Self::InvalidCursor => Some("cursor"),
            Self::EventInFuture { .. } => Some("event_ts"),
            Self::DenseNotKept => Some("rank_mode"),
            Self::IntegrityRule { field, .. } | Self::NotChangeable { field, .. } => Some(field),
            Self::Repeated { field, .. } => Some(field),
            Self::MalformedJson(_) => Some("body"),
            Self::BodyTooLarge { .. } => None,
        }
    }

    /// This error named by `field` instead: an id's or a name's own check names the
    /// value (`leaderboard_id`), while a request names it by the parameter that carried
    /// it (`lb`, `board`).
    pub fn for_field(self, field: &'static str) -> Self {
        match self {
            Self::Invalid { reason, .. } => Self::Invalid {
                field: field.into(),
                reason,
            },
            other => other,
        }
    }

    /// This error as found in item `index` of the list `list`: a field `list` or
    /// `list.x` becomes `list[index]` or `list[index].x` (the rules name a list's
    /// fields; the code that walks the list knows which item it was).
    pub fn in_item(self, list: &str, index: usize) -> Self {
        match self {
            Self::Invalid { field, reason } => {
                let field = match field.strip_prefix(list) {
                    Some("") => format!("{list}[{index}]").into(),
                    Some(rest) if rest.starts_with('.') => format!("{list}[{index}]{rest}").into(),
                    _ => field,
                };
                Self::Invalid { field, reason }
            }
            other => other,
        }
    }
}

/// `err` and its sources, joined with ": ", for logs.
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut out = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        out.push_str(": ");
        out.push_str(&e.to_string());
        cur = e.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lists_rule_is_named_by_the_items_place() {
        let at =
            |field: &'static str| match DomainError::invalid(field, "x").in_item("schedules", 2) {
                DomainError::Invalid { field, .. } => field.into_owned(),
                other => panic!("{other:?}"),
            };
        assert_eq!(at("schedules.cron"), "schedules[2].cron");
        assert_eq!(at("schedules"), "schedules[2]");
        assert_eq!(at("schedules_other"), "schedules_other");
        assert_eq!(at("season"), "season");
    }
}
