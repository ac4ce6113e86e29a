//! What the ports fail with, in the use cases' terms, whatever the backend: the score
//! store ([`StoreError`]), the rank index ([`IndexError`]), the social graph
//! ([`FriendsError`]) and the repair queue ([`QueueError`]). An adapter converts its
//! backend's error into these, and decides there what is an outage (a retry may help)
//! and what is an answer; the backend's error rides along as the `source`, for the logs.

use std::time::Duration;

use thiserror::Error;

/// A backend's own error, kept as the source of one of these for the logs.
pub type BackendError = Box<dyn std::error::Error + Send + Sync>;

/// A call to the score store failed or returned an item this code cannot read.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("the score store's {op} failed")]
    Call {
        op: &'static str,
        #[source]
        source: BackendError,
    },
    /// An item could not be converted to or from the store's format.
    #[error("a score store item could not be converted")]
    Item(#[source] BackendError),
    /// An item holds a value this code cannot read (e.g. a profile's attributes).
    #[error("a score store item holds an unreadable value: {0}")]
    Corrupt(String),
    /// Other writes kept moving an item's version past each attempt's condition.
    #[error("{0} kept changing under this write; try again")]
    Contended(&'static str),
    /// A request to the store could not be built (a value it refused, a missing field).
    #[error("a score store request could not be built")]
    Request(#[source] BackendError),
    /// A stream range that was delivered once did not read back to its end this time.
    #[error("stream shard {shard} did not read back to sequence number {end}")]
    StreamIncomplete { shard: String, end: String },
}

impl StoreError {
    /// The store's call `op` failed with `source`.
    pub fn call<E>(op: &'static str, source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::Call {
            op,
            source: Box::new(source),
        }
    }

    /// An item did not convert (`source`: the codec's error).
    pub fn item<E>(source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::Item(Box::new(source))
    }

    /// A request was refused before it was sent (`source`: the client's error).
    pub fn request<E>(source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::Request(Box::new(source))
    }
}

/// The Redis rank index failed, timed out, answered something unexpected, or does not
/// hold the board completely.
#[derive(Debug, Error)]
pub enum IndexError {
    /// The index's backend failed a call or answered with an error; `outage` when it is
    /// not there (a refused or dropped connection, a node still loading its data), as
    /// the adapter judged it.
    #[error("the rank index's call failed")]
    Call {
        outage: bool,
        #[source]
        source: BackendError,
    },
    #[error("Redis did not answer within {0:?}")]
    Timeout(Duration),
    /// The connection could not be opened (shared by every caller that waited for it).
    #[error("could not connect to Redis")]
    Connect(#[source] std::sync::Arc<IndexError>),
    /// Recent calls failed; calls are refused at once until the breaker's cool-down ends.
    #[error("Redis circuit breaker is open")]
    CircuitOpen,
    /// The board's index is being rebuilt or is missing; its contents are not the truth.
    #[error("the rank index of this board is not ready ({0:?})")]
    NotReady(super::Health),
    #[error("Redis returned an unexpected reply: {0}")]
    Reply(String),
    /// The Redis configuration (URL, mode, auth secret, TLS roots) cannot be used.
    #[error("Redis configuration: {0}")]
    Config(String),
}

impl IndexError {
    /// Redis is not there (a timeout, a refused or dropped connection, a connection that
    /// could not be opened), as opposed to an answer that is an error: waiting and
    /// trying again may help.
    pub fn is_outage(&self) -> bool {
        match self {
            Self::Call { outage, .. } => *outage,
            Self::Timeout(_) | Self::CircuitOpen => true,
            Self::Connect(inner) => !matches!(**inner, Self::Config(_)),
            Self::NotReady(_) | Self::Reply(_) | Self::Config(_) => false,
        }
    }
}

/// The social graph (friends source) could not be read.
#[derive(Debug, Error)]
pub enum FriendsError {
    #[error("social graph request failed")]
    Call(#[source] BackendError),
    #[error("social graph answered HTTP {0}")]
    Status(u16),
}

/// The repair queue (SQS) could not take a message.
#[derive(Debug, Error)]
pub enum QueueError {
    #[error("the repair queue's {op} failed")]
    Call {
        op: &'static str,
        #[source]
        source: BackendError,
    },
    #[error("a repair message could not be encoded")]
    Encode(#[from] serde_json::Error),
}
