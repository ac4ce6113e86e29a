//! The rules' error, at the bottom of the crate: [`DomainError`], for input the rules
//! refuse. The layers above keep their own: the adapters' in `store::error`
//! (`StoreError`, `IndexError`, `FriendsError`, `QueueError`), the use cases'
//! `ServiceError` in `service::error`, cold start's `InitError` in `wiring`. Which
//! HTTP status and stable code a client sees is decided in one place, `http`.

use thiserror::Error;

/// Input that breaks a rule. Nothing was changed when one of these is returned.
#[derive(Debug, Error)]
pub enum DomainError {
    /// A field is missing, mistyped or outside its allowed values.
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
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
    /// The body is not the JSON object the route expects.
    #[error("request body is not valid JSON for this route: {0}")]
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
}

impl DomainError {
    pub fn invalid(field: &'static str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            field,
            reason: reason.into(),
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
