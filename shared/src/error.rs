//! Error types: [`DomainError`] for input the rules refuse, [`StoreError`], [`IndexError`]
//! and [`FriendsError`] for the backends, and [`ServiceError`], what a use case returns.
//!
//! The mapping to HTTP status codes and stable error codes lives in [`crate::http`], the
//! one place that decides what a client sees.

use std::time::Duration;

use thiserror::Error;

use crate::board::BoardStatus;
use crate::ids::{LeaderboardId, MatchId, PlayerId};

/// Input that breaks a rule. Nothing was changed when one of these is returned.
#[derive(Debug, Error)]
pub enum DomainError {
    /// A field is missing, mistyped or outside its allowed values.
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    /// A score (or a SUM total) outside ±(2^53-1), the range that stays exact everywhere.
    #[error("{field}: {value} is outside the allowed range ±9007199254740991")]
    ScoreOutOfRange { field: &'static str, value: String },
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
    NotReady(crate::store::Health),
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
        e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout()
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

/// What a use case (ingest, a read, a board operation) can fail with.
#[derive(Debug, Error)]
pub enum ServiceError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("leaderboard {0} does not exist")]
    BoardNotFound(LeaderboardId),
    #[error("leaderboard {0} already exists with other settings")]
    BoardConflict(LeaderboardId),
    #[error("leaderboard {lb} is {status} and accepts no writes")]
    BoardNotActive {
        lb: LeaderboardId,
        status: BoardStatus,
    },
    #[error("the window of leaderboard {lb} closed at {closed_at}")]
    WindowClosed {
        lb: LeaderboardId,
        closed_at: String,
    },
    #[error("event_ts is outside the window of leaderboard {0}")]
    EventOutsideWindow(LeaderboardId),
    /// A well-formed region the family does not have: the family's settings, not the
    /// request's shape, refuse it (422, like a score outside a board's range).
    #[error("region {region} is not one of the family {game}/{mode}'s regions {regions:?}")]
    UnknownRegion {
        game: String,
        mode: String,
        region: String,
        regions: Vec<String>,
    },
    #[error("no board family for game {game} and mode {mode}")]
    FamilyNotFound { game: String, mode: String },
    #[error("the board family {game}/{mode} already exists with other settings")]
    FamilyConflict { game: String, mode: String },
    #[error("leaderboard {lb} cannot go from {from} to {to}")]
    InvalidTransition {
        lb: LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    },
    #[error("player {player} has no score on leaderboard {lb}")]
    NotRanked { lb: LeaderboardId, player: PlayerId },
    /// The same idempotency key came back with a different score.
    #[error("match {0} was already recorded for this player with a different score")]
    IdempotencyConflict(MatchId),
    /// Optimistic concurrency gave up after its retry budget; nothing was written.
    #[error("too many concurrent writes for this player, retry shortly")]
    Contention,
    /// The player is banned from the game the board belongs to.
    #[error("player {player} is banned from game {game}")]
    PlayerBanned { game: String, player: PlayerId },
    /// No ban of the player in the game.
    #[error("player {player} is not banned from game {game}")]
    NotBanned { game: String, player: PlayerId },
    /// The board's window has no sealed results (yet, or ever: not a window board).
    #[error("the results of leaderboard {0} are not sealed")]
    NotSealed(LeaderboardId),
    /// A seal was asked for a board that cannot be sealed now.
    #[error("leaderboard {lb} cannot be sealed: {why}")]
    NotSealable {
        lb: LeaderboardId,
        why: &'static str,
    },
    /// No schema mapping is stored for the event source (or not that version).
    #[error("no mapping is stored for source {0}")]
    MappingNotFound(String),
    /// The mapping changed since the version the caller expected.
    #[error("source {name} is at mapping version {current}, not {expected}")]
    MappingConflict {
        name: String,
        current: u64,
        expected: u64,
    },
    /// A player asked for another player's live neighbourhood.
    #[error("a live neighbourhood is only for its own player; {player} is not the caller")]
    NotYourView { player: PlayerId },
    /// The caller made too many reads in the current window.
    #[error("too many reads; retry in {retry_after_s} s")]
    RateLimited { retry_after_s: u64 },
    /// Served from DynamoDB, a rank past the count cap needs the board's rank sketch,
    /// and the board has none yet (it is taken every few minutes for big boards).
    #[error("the rank on leaderboard {0} cannot be worked out while its rank index is unavailable")]
    RankUnavailable(LeaderboardId),
    /// A closed window that keeps no rank order in DynamoDB (`Board::rank_index`), read
    /// after Redis let its keys go: its final standings are its sealed results.
    #[error(
        "leaderboard {0} closed and its live ranks expired; its final standings are at /leaderboards/{0}/results and in each player's history"
    )]
    WindowExpired(LeaderboardId),
    #[error("the score store is unavailable")]
    Store(#[from] StoreError),
    #[error("the rank index is unavailable")]
    Index(#[from] IndexError),
    #[error("the friends source is unavailable")]
    Friends(#[from] FriendsError),
}

impl ServiceError {
    /// True for a fault of the service's backends or of contention, which a retry may
    /// get past; false for a request that will never succeed as it is.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Store(_)
                | Self::Index(_)
                | Self::Friends(_)
                | Self::Contention
                | Self::RateLimited { .. }
                | Self::RankUnavailable(_)
        )
    }

    /// The stable code clients and logs see (`{error: {code}}`, Lambda's `errorType`).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Domain(d) => match d {
                DomainError::Invalid { .. } => "invalid_request",
                DomainError::MalformedJson(_) => "malformed_json",
                DomainError::BodyTooLarge { .. } => "payload_too_large",
                DomainError::ScoreOutOfRange { .. } => "score_out_of_range",
                DomainError::InvalidCursor => "invalid_cursor",
                DomainError::EventInFuture { .. } => "event_ts_in_future",
                DomainError::DenseNotKept => "dense_ranks_not_kept",
            },
            Self::EventOutsideWindow(_) => "event_outside_window",
            Self::UnknownRegion { .. } => "unknown_region",
            Self::WindowClosed { .. } => "window_closed",
            Self::FamilyNotFound { .. } => "family_not_found",
            Self::FamilyConflict { .. } => "family_conflict",
            Self::InvalidTransition { .. } => "invalid_transition",
            Self::BoardNotFound(_) => "board_not_found",
            Self::NotRanked { .. } => "not_ranked",
            Self::BoardConflict(_) => "board_conflict",
            Self::BoardNotActive { .. } => "board_not_active",
            Self::IdempotencyConflict(_) => "idempotency_conflict",
            Self::Contention => "contention",
            Self::PlayerBanned { .. } => "player_banned",
            Self::NotBanned { .. } => "not_banned",
            Self::NotSealed(_) => "not_sealed",
            Self::NotSealable { .. } => "not_sealable",
            Self::MappingNotFound(_) => "mapping_not_found",
            Self::MappingConflict { .. } => "mapping_conflict",
            Self::NotYourView { .. } => "not_your_view",
            Self::RateLimited { .. } => "rate_limited",
            Self::RankUnavailable(_) => "rank_unavailable",
            Self::WindowExpired(_) => "window_expired",
            Self::Store(_) => "store_unavailable",
            Self::Index(_) => "index_unavailable",
            Self::Friends(_) => "friends_unavailable",
        }
    }
}

/// Building a function's clients at cold start failed.
#[derive(Debug, Error)]
pub enum InitError {
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    #[error("the Redis configuration is invalid: {0}")]
    Redis(#[from] IndexError),
    #[error("the events API configuration is invalid: {0}")]
    Events(String),
    #[error("the social graph client could not be built: {0}")]
    Friends(#[from] FriendsError),
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
