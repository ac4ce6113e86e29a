//! What the adapters fail with: DynamoDB ([`StoreError`]), the Redis rank index
//! ([`IndexError`]), the social graph ([`FriendsError`]) and the repair queue
//! ([`QueueError`]).

use std::time::Duration;

use thiserror::Error;

/// A DynamoDB call failed or returned an item this code cannot read.
#[derive(Debug, Error)]
pub enum StoreError {
    #[error("DynamoDB {op} failed")]
    Sdk {
        op: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("a DynamoDB item could not be converted")]
    Item(#[from] serde_dynamo::Error),
    /// An item holds a value this code cannot read (e.g. a profile's attributes).
    #[error("a DynamoDB item holds an unreadable value: {0}")]
    Corrupt(String),
    /// Other writes kept moving an item's version past each attempt's condition.
    #[error("{0} kept changing under this write; try again")]
    Contended(&'static str),
    #[error("a DynamoDB request could not be built")]
    Build(#[from] aws_sdk_dynamodb::error::BuildError),
    /// A stream range that was delivered once did not read back to its end this time.
    #[error("stream shard {shard} did not read back to sequence number {end}")]
    StreamIncomplete { shard: String, end: String },
}

impl StoreError {
    pub(crate) fn sdk<E>(op: &'static str, source: E) -> Self
    where
        E: std::error::Error + Send + Sync + 'static,
    {
        Self::Sdk {
            op,
            source: Box::new(source),
        }
    }
}

/// The Redis rank index failed, timed out, answered something unexpected, or does not
/// hold the board completely.
#[derive(Debug, Error)]
pub enum IndexError {
    #[error("Redis command failed")]
    Redis(#[from] redis::RedisError),
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
            Self::Redis(e) => Self::redis_outage(e),
            Self::Timeout(_) | Self::CircuitOpen => true,
            Self::Connect(inner) => !matches!(**inner, Self::Config(_)),
            Self::NotReady(_) | Self::Reply(_) | Self::Config(_) => false,
        }
    }

    pub(crate) fn redis_outage(e: &redis::RedisError) -> bool {
        use redis::{ErrorKind, ServerErrorKind as Server};
        e.is_io_error()
            || e.is_connection_dropped()
            || e.is_connection_refusal()
            || e.is_timeout()
            // A node still loading its data set after a restart answers LOADING: it is
            // not there yet. The repair waits that out as it waits out a silent Redis,
            // instead of failing its message (and the breaker counts it).
            || e.kind() == ErrorKind::Server(Server::BusyLoading)
    }
}

/// The social graph (friends source) could not be read.
#[derive(Debug, Error)]
pub enum FriendsError {
    #[error("social graph request failed")]
    Http(#[from] reqwest::Error),
    #[error("social graph answered HTTP {0}")]
    Status(u16),
}

/// The repair queue (SQS) could not take a message.
#[derive(Debug, Error)]
pub enum QueueError {
    #[error("SQS {op} failed")]
    Sqs {
        op: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error("a repair message could not be encoded")]
    Encode(#[from] serde_json::Error),
}

#[cfg(test)]
mod tests {
    use super::IndexError;
    use redis::{ErrorKind, RedisError, ServerErrorKind};

    #[test]
    fn a_node_loading_its_data_is_an_outage_and_an_error_reply_is_not() {
        let server = |kind| IndexError::Redis(RedisError::from((ErrorKind::Server(kind), "")));
        assert!(server(ServerErrorKind::BusyLoading).is_outage());
        // A cluster mid-move or mid-failover: the client retries these itself.
        for kind in [
            ServerErrorKind::TryAgain,
            ServerErrorKind::ClusterDown,
            ServerErrorKind::ResponseError,
            ServerErrorKind::NoScript,
            ServerErrorKind::ReadOnly,
        ] {
            assert!(!server(kind).is_outage(), "{kind:?}");
        }
        assert!(!IndexError::Reply("odd".into()).is_outage());
    }
}
