//! Use cases, one module each: [`boards`] (define and look up boards), [`ingest`]
//! (idempotent score submission with write-through), [`reads`] (rank, top, friends) and
//! [`projector`] (stream changes into the rank index). They are generic over the ports in
//! [`crate::store`]; [`Context`] carries the adapters a function built at cold start.

pub mod boards;
pub mod ingest;
pub mod projector;
pub mod reads;

use std::time::Duration;

use crate::config::{Config, ConfigError};
use crate::dynamodb::DynamoScoreStore;
use crate::error::IndexError;
use crate::redis::RedisRankIndex;
use boards::BoardCache;

/// What the ingest and read use cases work with.
pub struct Context<S, I> {
    pub store: S,
    pub index: I,
    pub boards: BoardCache,
    /// How long a receipt (and so a `match_id` retry) is kept.
    pub receipt_ttl: Duration,
}

/// Building the production context failed.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the Redis URL is invalid")]
    Redis(#[from] IndexError),
}

impl Context<DynamoScoreStore, RedisRankIndex> {
    /// DynamoDB and Redis adapters from the environment. Opens no connection: the first
    /// request does.
    pub async fn from_config(config: &Config) -> Result<Self, InitError> {
        let index = RedisRankIndex::new(
            config.require_redis_url()?,
            &config.redis_key_prefix,
            config.redis_timeout,
        )?;
        Ok(Self {
            store: dynamo_store(config).await?,
            index,
            boards: BoardCache::new(config.board_cache_ttl),
            receipt_ttl: config.receipt_ttl,
        })
    }
}

/// The DynamoDB store from the standard AWS environment (region, credentials, endpoint).
pub async fn dynamo_store(config: &Config) -> Result<DynamoScoreStore, ConfigError> {
    let table = config.require_table_name()?;
    let aws = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
    Ok(DynamoScoreStore::new(
        aws_sdk_dynamodb::Client::new(&aws),
        table,
    ))
}

/// The context every HTTP function but `boards` runs with in production.
pub type AppContext = Context<DynamoScoreStore, RedisRankIndex>;
