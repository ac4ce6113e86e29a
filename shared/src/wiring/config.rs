//! `Config`: the environment a function reads once at cold start.
//!
//! | variable | default | used by |
//! |---|---|---|
//! | `TABLE_NAME` | required | all but projector |
//! | `REDIS_URL` | required | all but boards |
//! | `REDIS_MODE` | from the URL | `single` or `cluster`; a `redis+cluster://` URL (or several hosts) means cluster |
//! | `REDIS_AUTH_SECRET_ARN` | none | Secrets Manager secret holding the Redis auth token (`{"token": …}` or a plain string), read on first use |
//! | `REDIS_IAM_CACHE` | none | authenticate with IAM tokens to this ElastiCache cache (its name) instead of a password (`adapters::redis::iam`) |
//! | `REDIS_IAM_USER` | `default.iam-user` | the ElastiCache user the IAM tokens are for |
//! | `REDIS_IAM_SERVERLESS` | `true` | whether `REDIS_IAM_CACHE` is a serverless cache (`false`: a replication group) |
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
//! | `CARD_CACHE_TTL_MS` | 250 | top and ranks pages: how long a container reuses the cards of a top window it holds (0: off); a rename shows within this plus `READ_CACHE_TTL_MS` |
//! | `READS_PER_PLAYER_PER_S` | 20 | rank, friends, top: reads per player (JWT subject) per second (0: off) |
//! | `READS_PER_IP_PER_S` | 200 | rank, friends, top: reads per source IP per second (0: off) |
//! | `NAMES_ON_ROWS` | true | reads: put each row's display name, avatar and country on it (false: bare ids, no card reads) |
//! | `PLAYERS_SET_PROFILES` | false | profiles: players may set their own card (`PUT /me/profile`) |
//! | `WRITE_THROUGH` | true | ingest: apply to Redis in the request (false: the stream alone; for measuring it) |
//! | `EVENT_BUS_NAME` | required by seal | the EventBridge bus `leaderboard.window.closed` goes to |
//! | `DEAD_LETTER_QUEUE_URL` | required by stream-ingest | SQS queue for stream records that can never apply (with the reason and the raw payload) |
//! | `SEAL_SETTLE_SECONDS` | 60 | seal: how long after a window closes it is sealed (DynamoDB's rank index catching up) |
//! | `BOARD_CACHE_TTL_MS` | 1000 | how long a container trusts a cached board definition (a manual freeze takes effect within it) |
//! | `EXPORT_BUCKET` | required by seal | the S3 bucket exports are written to |
//! | `EXPORT_QUEUE_URL` | required by seal | SQS queue that hands an export to a run of the seal function |
//! | `EXPORT_PART_BYTES` | 5242880 | seal: bytes per uploaded part of an export (S3's minimum; a local stand-in may take less) |
//! | `EXPORT_LINK_SECONDS` | 900 | how long an export's link reads the file |
//! | `EXPORT_SETTLE_MS` | 2000 | seal: how long after it is asked for an export begins its walk (DynamoDB's rank order catching up) |
//! | `DYNAMODB_TIMEOUT_MS` | 2000 | every DynamoDB (and Streams) call's budget, all its attempts together; each attempt, and opening a connection, gets half of it; the SQS queues' calls take the same |
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

/// How long the friends read waits for the social graph, when not configured.
pub(crate) const SOCIAL_GRAPH_TIMEOUT: Duration = Duration::from_millis(200);

/// How long one DynamoDB call may take, all its attempts together, when not configured.
pub(crate) const DYNAMODB_TIMEOUT: Duration = Duration::from_secs(2);

/// The environment as read: a tunable left unset is `None`, and the code that uses it
/// holds its default, in one place each ([`leaderboard_core::service::Settings`]'s `Default`, the
/// Redis call and connect timeouts in [`crate::adapters::redis`]); [`crate::wiring`] merges them.
#[derive(Debug, Clone)]
pub struct Config {
    pub table_name: Option<String>,
    pub redis_url: Option<String>,
    pub redis_mode: Option<String>,
    pub redis_auth_secret: Option<String>,
    pub redis_iam_cache: Option<String>,
    pub redis_iam_user: Option<String>,
    pub redis_iam_serverless: Option<bool>,
    pub redis_tls_ca_file: Option<String>,
    pub redis_key_prefix: String,
    pub redis_timeout: Option<Duration>,
    pub redis_connect_timeout: Option<Duration>,
    pub repair_queue_url: Option<String>,
    pub social_graph_url: Option<String>,
    pub social_graph_timeout: Duration,
    pub dynamodb_timeout: Duration,
    pub receipt_ttl: Option<Duration>,
    pub board_cache_ttl: Option<Duration>,
    pub redis_retention: Option<Duration>,
    pub max_future_skew: Option<Duration>,
    pub cursor_secret: Option<String>,
    pub read_cache_ttl: Option<Duration>,
    pub card_cache_ttl: Option<Duration>,
    pub reads_per_player: Option<u64>,
    pub reads_per_ip: Option<u64>,
    pub write_through: Option<bool>,
    pub players_set_profiles: Option<bool>,
    pub names_on_rows: Option<bool>,
    pub event_bus_name: Option<String>,
    pub dead_letter_queue_url: Option<String>,
    pub seal_settle: Option<Duration>,
    pub live_events_url: Option<String>,
    /// The rank index's ElastiCache replication group (`CACHE_REPLICATION_GROUP_ID`).
    pub cache_replication_group: Option<String>,
    pub export_bucket: Option<String>,
    pub export_queue_url: Option<String>,
    pub export_part_bytes: Option<u64>,
    pub export_link_ttl: Option<Duration>,
    pub export_settle: Option<Duration>,
}

fn var(name: &'static str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A number, if set.
fn number(name: &'static str) -> Result<Option<u64>, ConfigError> {
    var(name)
        .map(|value| {
            value
                .parse()
                .map_err(|_| ConfigError::NotANumber { name, value })
        })
        .transpose()
}

fn millis(name: &'static str) -> Result<Option<Duration>, ConfigError> {
    Ok(number(name)?.map(Duration::from_millis))
}

fn seconds(name: &'static str, unit: u64) -> Result<Option<Duration>, ConfigError> {
    Ok(number(name)?.map(|n| Duration::from_secs(n * unit)))
}

/// A flag, if set.
fn flag(name: &'static str) -> Result<Option<bool>, ConfigError> {
    match var(name).as_deref() {
        None => Ok(None),
        Some("true" | "1") => Ok(Some(true)),
        Some("false" | "0") => Ok(Some(false)),
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
            redis_iam_cache: var("REDIS_IAM_CACHE"),
            redis_iam_user: var("REDIS_IAM_USER"),
            redis_iam_serverless: flag("REDIS_IAM_SERVERLESS")?,
            redis_tls_ca_file: var("REDIS_TLS_CA_FILE"),
            redis_key_prefix: var("REDIS_KEY_PREFIX").unwrap_or_default(),
            redis_timeout: millis("REDIS_TIMEOUT_MS")?,
            redis_connect_timeout: millis("REDIS_CONNECT_TIMEOUT_MS")?,
            repair_queue_url: var("REPAIR_QUEUE_URL"),
            social_graph_url: var("SOCIAL_GRAPH_URL"),
            social_graph_timeout: millis("SOCIAL_GRAPH_TIMEOUT_MS")?
                .unwrap_or(SOCIAL_GRAPH_TIMEOUT),
            dynamodb_timeout: millis("DYNAMODB_TIMEOUT_MS")?.unwrap_or(DYNAMODB_TIMEOUT),
            receipt_ttl: seconds("RECEIPT_TTL_DAYS", 86_400)?,
            board_cache_ttl: millis("BOARD_CACHE_TTL_MS")?,
            redis_retention: seconds("REDIS_RETENTION_SECONDS", 1)?,
            max_future_skew: millis("MAX_FUTURE_SKEW_MS")?,
            cursor_secret: var("CURSOR_SECRET"),
            read_cache_ttl: millis("READ_CACHE_TTL_MS")?,
            card_cache_ttl: millis("CARD_CACHE_TTL_MS")?,
            reads_per_player: number("READS_PER_PLAYER_PER_S")?,
            reads_per_ip: number("READS_PER_IP_PER_S")?,
            write_through: flag("WRITE_THROUGH")?,
            players_set_profiles: flag("PLAYERS_SET_PROFILES")?,
            names_on_rows: flag("NAMES_ON_ROWS")?,
            event_bus_name: var("EVENT_BUS_NAME"),
            dead_letter_queue_url: var("DEAD_LETTER_QUEUE_URL"),
            seal_settle: seconds("SEAL_SETTLE_SECONDS", 1)?,
            live_events_url: var("LIVE_EVENTS_URL"),
            cache_replication_group: var("CACHE_REPLICATION_GROUP_ID"),
            export_bucket: var("EXPORT_BUCKET"),
            export_queue_url: var("EXPORT_QUEUE_URL"),
            export_part_bytes: number("EXPORT_PART_BYTES")?,
            export_link_ttl: seconds("EXPORT_LINK_SECONDS", 1)?,
            export_settle: millis("EXPORT_SETTLE_MS")?,
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

    /// `EVENT_BUS_NAME`, for the function that publishes events.
    pub fn require_event_bus_name(&self) -> Result<&str, ConfigError> {
        self.event_bus_name
            .as_deref()
            .ok_or(ConfigError::Missing("EVENT_BUS_NAME"))
    }

    /// `DEAD_LETTER_QUEUE_URL`, for stream ingest.
    pub fn require_dead_letter_queue_url(&self) -> Result<&str, ConfigError> {
        self.dead_letter_queue_url
            .as_deref()
            .ok_or(ConfigError::Missing("DEAD_LETTER_QUEUE_URL"))
    }

    /// `LIVE_EVENTS_URL`, the events API's publish endpoint, for the live publisher.
    pub fn require_live_events_url(&self) -> Result<&str, ConfigError> {
        self.live_events_url
            .as_deref()
            .ok_or(ConfigError::Missing("LIVE_EVENTS_URL"))
    }

    /// `EXPORT_BUCKET` and `EXPORT_QUEUE_URL`, for the function that writes exports.
    pub fn require_export(&self) -> Result<(&str, &str), ConfigError> {
        let bucket = self.export_bucket.as_deref();
        let queue = self.export_queue_url.as_deref();
        Ok((
            bucket.ok_or(ConfigError::Missing("EXPORT_BUCKET"))?,
            queue.ok_or(ConfigError::Missing("EXPORT_QUEUE_URL"))?,
        ))
    }

    pub fn require_social_graph_url(&self) -> Result<&str, ConfigError> {
        self.social_graph_url
            .as_deref()
            .ok_or(ConfigError::Missing("SOCIAL_GRAPH_URL"))
    }
}
