//! `Config`: the environment a function reads once at cold start.
//!
//! | variable | default | used by |
//! |---|---|---|
//! | `TABLE_NAME` | required | all but projector |
//! | `REDIS_URL` | required | all but boards |
//! | `REDIS_MODE` | from the URL | `single` or `cluster`; a `redis+cluster://` URL (or several hosts) means cluster |
//! | `REDIS_AUTH_SECRET_ARN` | none | Secrets Manager secret holding the Redis auth token (`{"token": …}` or a plain string), read on first use |
//! | `REDIS_TLS_CA_FILE` | none | PEM roots for `rediss://` instead of the bundled public ones (a private CA) |
//! | `REDIS_KEY_PREFIX` | empty | all; isolates tests sharing a server |
//! | `REDIS_TIMEOUT_MS` | 50 | every Redis call's budget |
//! | `REDIS_CONNECT_TIMEOUT_MS` | 1000 | one attempt to open the connection (callers wait for it at most 250 ms, or `REDIS_TIMEOUT_MS` if longer) |
//! | `REPAIR_QUEUE_URL` | none | SQS queue where boards whose index needs a rebuild are reported (the repair function consumes it); without it only the sweep repairs |
//! | `SOCIAL_GRAPH_URL` | required by friends | friends |
//! | `SOCIAL_GRAPH_TIMEOUT_MS` | 200 | friends |
//! | `RECEIPT_TTL_DAYS` | 30 | ingest: how long a `match_id` retry returns its receipt |
//! | `REDIS_RETENTION_SECONDS` | 604800 | how long a closed window's keys stay in Redis |
//! | `MAX_FUTURE_SKEW_MS` | 60000 | how far in the future an `event_ts` may be |
//! | `CURSOR_SECRET` | required by top and boards | HMAC key of paging cursors |
//! | `READ_CACHE_TTL_MS` | 250 | rank, friends, top: how long a container reuses a reply (0: off) |
//! | `READS_PER_PLAYER_PER_S` | 20 | rank, friends, top: reads per player (JWT subject) per second (0: off) |
//! | `READS_PER_IP_PER_S` | 200 | rank, friends, top: reads per source IP per second (0: off) |
//! | `WRITE_THROUGH` | true | ingest: apply to Redis in the request (false: the stream alone; for measuring it) |
//! | `BOARD_CACHE_TTL_MS` | 1000 | how long a container trusts a cached board definition (a manual freeze takes effect within it) |
//!
//! DynamoDB's endpoint and region come from the standard AWS variables
//! (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_REGION`), so any compatible endpoint works by
//! changing the URL alone.

use std::time::Duration;

use thiserror::Error;

/// A variable is missing or unreadable; the function fails init and names it.
#[derive(Debug, Error)]
pub enum ConfigError {
    #[error("environment variable {0} is required")]
    Missing(&'static str),
    #[error("environment variable {name} is not a valid number: {value:?}")]
    NotANumber { name: &'static str, value: String },
    #[error("environment variable {name} must be true or false: {value:?}")]
    NotAFlag { name: &'static str, value: String },
}

#[derive(Debug, Clone)]
pub struct Config {
    pub table_name: Option<String>,
    pub redis_url: Option<String>,
    pub redis_mode: Option<String>,
    pub redis_auth_secret: Option<String>,
    pub redis_tls_ca_file: Option<String>,
    pub redis_key_prefix: String,
    pub redis_timeout: Duration,
    pub redis_connect_timeout: Duration,
    pub repair_queue_url: Option<String>,
    pub social_graph_url: Option<String>,
    pub social_graph_timeout: Duration,
    pub receipt_ttl: Duration,
    pub board_cache_ttl: Duration,
    pub redis_retention: Duration,
    pub max_future_skew: Duration,
    pub cursor_secret: Option<String>,
    pub read_cache_ttl: Duration,
    pub reads_per_player: u64,
    pub reads_per_ip: u64,
    pub write_through: bool,
}

fn var(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn number(name: &'static str, default: u64) -> Result<u64, ConfigError> {
    match var(name) {
        None => Ok(default),
        Some(value) => value
            .parse()
            .map_err(|_| ConfigError::NotANumber { name, value }),
    }
}

fn flag(name: &'static str, default: bool) -> Result<bool, ConfigError> {
    match var(name).as_deref() {
        None => Ok(default),
        Some("true" | "1") => Ok(true),
        Some("false" | "0") => Ok(false),
        Some(value) => Err(ConfigError::NotAFlag {
            name,
            value: value.to_owned(),
        }),
    }
}

impl Config {
    pub fn from_env() -> Result<Self, ConfigError> {
        Ok(Self {
            table_name: var("TABLE_NAME"),
            redis_url: var("REDIS_URL"),
            redis_mode: var("REDIS_MODE"),
            redis_auth_secret: var("REDIS_AUTH_SECRET_ARN"),
            redis_tls_ca_file: var("REDIS_TLS_CA_FILE"),
            redis_key_prefix: var("REDIS_KEY_PREFIX").unwrap_or_default(),
            redis_timeout: Duration::from_millis(number("REDIS_TIMEOUT_MS", 50)?),
            redis_connect_timeout: Duration::from_millis(number(
                "REDIS_CONNECT_TIMEOUT_MS",
                1_000,
            )?),
            repair_queue_url: var("REPAIR_QUEUE_URL"),
            social_graph_url: var("SOCIAL_GRAPH_URL"),
            social_graph_timeout: Duration::from_millis(number("SOCIAL_GRAPH_TIMEOUT_MS", 200)?),
            receipt_ttl: Duration::from_secs(number("RECEIPT_TTL_DAYS", 30)? * 86_400),
            board_cache_ttl: Duration::from_millis(number("BOARD_CACHE_TTL_MS", 1_000)?),
            redis_retention: Duration::from_secs(number("REDIS_RETENTION_SECONDS", 604_800)?),
            max_future_skew: Duration::from_millis(number("MAX_FUTURE_SKEW_MS", 60_000)?),
            cursor_secret: var("CURSOR_SECRET"),
            read_cache_ttl: Duration::from_millis(number("READ_CACHE_TTL_MS", 250)?),
            reads_per_player: number("READS_PER_PLAYER_PER_S", 20)?,
            reads_per_ip: number("READS_PER_IP_PER_S", 200)?,
            write_through: flag("WRITE_THROUGH", true)?,
        })
    }

    /// `TABLE_NAME`, for the functions that use DynamoDB.
    pub fn require_table_name(&self) -> Result<&str, ConfigError> {
        self.table_name
            .as_deref()
            .ok_or(ConfigError::Missing("TABLE_NAME"))
    }

    /// `REDIS_URL`, for the functions that cannot work without it.
    pub fn require_redis_url(&self) -> Result<&str, ConfigError> {
        self.redis_url
            .as_deref()
            .ok_or(ConfigError::Missing("REDIS_URL"))
    }

    /// `CURSOR_SECRET`, for the functions that issue paging cursors.
    pub fn require_cursor_secret(&self) -> Result<&str, ConfigError> {
        self.cursor_secret
            .as_deref()
            .ok_or(ConfigError::Missing("CURSOR_SECRET"))
    }

    pub fn require_social_graph_url(&self) -> Result<&str, ConfigError> {
        self.social_graph_url
            .as_deref()
            .ok_or(ConfigError::Missing("SOCIAL_GRAPH_URL"))
    }
}
