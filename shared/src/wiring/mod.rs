//! Wiring: configuration in, the clients and adapters a function needs out, built once
//! per container (cold start). Each `main.rs` is one call of [`serve`] with the builders
//! its function needs; nothing else builds AWS clients, and the use cases get their
//! ports already built.
//!
//! Beside it, what every function starts with: [`config`] (the environment, read once),
//! [`telemetry`] (JSON logs) and [`metrics`] (the metrics the use cases record, written
//! as CloudWatch Embedded Metric Format), and [`export`] (the exports' bucket and queue). The one TLS crypto provider every client uses
//! is the adapters' (`adapters::tls`).

pub mod config;
pub mod export;
pub mod metrics;
pub mod seal;
pub mod telemetry;

use thiserror::Error;

use crate::adapters::dynamodb::{DynamoScoreStore, DynamoStreams};
use crate::adapters::eventbridge::EventBridgePublisher;
use crate::adapters::redis::{
    Access, CALL_TIMEOUT, CONNECT_TIMEOUT, IamAuth, RedisRankIndex, SecretToken, Target, Topology,
};
use crate::wiring::config::{Config, ConfigError};
use leaderboard_core::service::hot::RateLimits;
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::service::{Context, Settings};
use leaderboard_core::store::{FriendsError, IndexError};

/// A function's whole life (each `main.rs` is one call of it): JSON logs and metrics, the
/// configuration read once, the dependencies `deps` builds from it once per container
/// (the cold start), then the runtime's loop handing each event to `handle` with them.
/// The dependencies live as long as the process, so the handler borrows them for
/// `'static`. Every log line of an invocation carries its correlation id
/// ([`crate::edge::correlation`]); its metrics are written when it ends
/// ([`metrics::flush`]).
pub async fn serve<D, X, E, R, HandlerError, F, Fut>(
    deps: impl AsyncFnOnce(&Config) -> Result<D, X>,
    handle: F,
) -> Result<(), lambda_runtime::Error>
where
    D: Sync + 'static,
    X: Into<lambda_runtime::Error>,
    E: serde::de::DeserializeOwned + crate::edge::correlation::Correlated,
    R: serde::Serialize,
    HandlerError: Into<lambda_runtime::Diagnostic> + std::fmt::Debug,
    F: Fn(&'static D, lambda_runtime::LambdaEvent<E>) -> Fut,
    Fut: std::future::Future<Output = Result<R, HandlerError>>,
{
    use tracing::Instrument as _;
    telemetry::init();
    metrics::init();
    let config = Config::from_env()?;
    let deps: &'static D = Box::leak(Box::new(deps(&config).await.map_err(Into::into)?));
    lambda_runtime::run(lambda_runtime::service_fn(
        |event: lambda_runtime::LambdaEvent<E>| {
            let id = event
                .payload
                .correlation_id()
                .unwrap_or_else(|| event.context.request_id.clone());
            let span = tracing::info_span!("invocation", correlation_id = %id);
            let answer = handle(deps, event).instrument(span);
            async move {
                let answer = answer.await;
                metrics::flush();
                answer
            }
        },
    ))
    .await
}

/// The AWS configuration loader every client here starts from: the standard environment
/// (region, credentials, endpoints) and one HTTPS client on rustls + ring (the SDK's
/// default client would link aws-lc-rs as a second crypto library).
pub fn aws_defaults() -> aws_config::ConfigLoader {
    use aws_smithy_http_client::{Builder, tls};
    let http = Builder::new()
        .tls_provider(tls::Provider::Rustls(
            tls::rustls_provider::CryptoMode::Ring,
        ))
        .build_https();
    aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(http)
}

/// The standard AWS environment, loaded once per container however many clients are
/// built from it.
async fn aws() -> &'static aws_config::SdkConfig {
    static AWS: tokio::sync::OnceCell<aws_config::SdkConfig> = tokio::sync::OnceCell::const_new();
    AWS.get_or_init(|| aws_defaults().load()).await
}

/// The use cases' tunables from the configuration.
pub fn settings(c: &Config) -> Settings {
    let d = Settings::default();
    Settings {
        receipt_ttl: c.receipt_ttl.unwrap_or(d.receipt_ttl),
        board_cache_ttl: c.board_cache_ttl.unwrap_or(d.board_cache_ttl),
        redis_retention: c.redis_retention.unwrap_or(d.redis_retention),
        max_future_skew: c.max_future_skew.unwrap_or(d.max_future_skew),
        read_cache_ttl: c.read_cache_ttl.unwrap_or(d.read_cache_ttl),
        card_cache_ttl: c.card_cache_ttl.unwrap_or(d.card_cache_ttl),
        rate_limits: RateLimits {
            per_player: c.reads_per_player.unwrap_or(d.rate_limits.per_player),
            per_ip: c.reads_per_ip.unwrap_or(d.rate_limits.per_ip),
            ..d.rate_limits
        },
        write_through: c.write_through.unwrap_or(d.write_through),
        players_set_profiles: c.players_set_profiles.unwrap_or(d.players_set_profiles),
        names_on_rows: c.names_on_rows.unwrap_or(d.names_on_rows),
    }
}

/// The Redis index `REDIS_URL`, `REDIS_MODE`, `REDIS_AUTH_SECRET_ARN` (or `REDIS_IAM_*`),
/// `REDIS_TLS_CA_FILE`, `REDIS_KEY_PREFIX`, `REDIS_TIMEOUT_MS` and
/// `REDIS_CONNECT_TIMEOUT_MS` describe.
/// Reads the CA file if one is named; opens no connection and reads no secret yet.
pub async fn rank_index(config: &Config) -> Result<RedisRankIndex, InitError> {
    let mode = Topology::parse(config.redis_mode.as_deref())?;
    let target = Target::parse(config.require_redis_url()?, mode)?;
    let secret = match &config.redis_auth_secret {
        Some(id) => {
            let aws = aws().await;
            Some(SecretToken {
                client: aws_sdk_secretsmanager::Client::new(aws),
                secret_id: id.clone(),
            })
        }
        None => None,
    };
    let iam = match &config.redis_iam_cache {
        Some(cache) => {
            let aws = aws().await;
            let missing = || IndexError::Config("REDIS_IAM_CACHE needs a region".to_owned());
            Some(IamAuth {
                cache: cache.clone(),
                user: (config.redis_iam_user.clone()).unwrap_or_else(|| "default.iam-user".into()),
                region: aws.region().ok_or_else(missing)?.to_string(),
                serverless: config.redis_iam_serverless.unwrap_or(true),
                credentials: aws.credentials_provider().ok_or_else(|| {
                    IndexError::Config("REDIS_IAM_CACHE needs AWS credentials".to_owned())
                })?,
            })
        }
        None => None,
    };
    let ca_pem = match &config.redis_tls_ca_file {
        Some(path) => Some(std::fs::read(path).map_err(|e| {
            IndexError::Config(format!("cannot read REDIS_TLS_CA_FILE {path}: {e}"))
        })?),
        None => None,
    };
    let index = RedisRankIndex::with_target(
        target,
        Access {
            secret,
            iam,
            ca_pem,
        },
        &config.redis_key_prefix,
        config.redis_timeout.unwrap_or(CALL_TIMEOUT),
        config.redis_connect_timeout.unwrap_or(CONNECT_TIMEOUT),
    )?;
    Ok(match config.names_on_rows {
        Some(false) => index.without_names(),
        _ => index,
    })
}

/// The context every HTTP function but `boards` runs with: DynamoDB and Redis adapters
/// from the environment. Opens no connection: the first request does.
pub async fn app_context(config: &Config) -> Result<AppContext, InitError> {
    let index = rank_index(config).await?;
    Ok(
        Context::new(dynamo_store(config).await?, index, settings(config))
            .with_repairs(repair_reporter(config).await),
    )
}

/// The repair queue from `REPAIR_QUEUE_URL` (none without it).
pub async fn repair_reporter(config: &Config) -> Reporter {
    match &config.repair_queue_url {
        Some(url) => Reporter::new(crate::adapters::sqs::SqsRepairQueue::new(
            sqs_client(config).await,
            url.clone(),
        )),
        None => Reporter::default(),
    }
}

/// The rank index's control plane, when `CACHE_REPLICATION_GROUP_ID` names its
/// replication group (none on a deployment without one).
pub async fn cache_plane(
    config: &Config,
) -> Option<crate::adapters::elasticache::ElastiCachePlane> {
    let group = config.cache_replication_group.clone()?;
    let client = aws_sdk_elasticache::Client::new(&budgeted(config).await);
    Some(crate::adapters::elasticache::ElastiCachePlane::new(
        client, group,
    ))
}

/// The social graph client: `SOCIAL_GRAPH_URL`, within `SOCIAL_GRAPH_TIMEOUT_MS`.
pub fn friends_source(
    config: &Config,
) -> Result<crate::adapters::social::HttpFriendsSource, InitError> {
    let url = config.require_social_graph_url()?;
    let source = crate::adapters::social::HttpFriendsSource::new(url, config.social_graph_timeout)?;
    Ok(source)
}

/// The dead-letter queue `DEAD_LETTER_QUEUE_URL` names.
pub async fn dead_letters(
    config: &Config,
) -> Result<crate::adapters::sqs::SqsDeadLetters, ConfigError> {
    let url = config.require_dead_letter_queue_url()?;
    Ok(crate::adapters::sqs::SqsDeadLetters::new(
        sqs_client(config).await,
        url,
    ))
}

/// An SQS client with the DynamoDB calls' budget: a read that finds a board's index
/// not ready reports it to the repair queue before it answers, so a silent queue must
/// not hold the read either.
async fn sqs_client(config: &Config) -> aws_sdk_sqs::Client {
    aws_sdk_sqs::Client::new(&budgeted(config).await)
}

/// The DynamoDB store from the standard AWS environment (region, credentials, endpoint).
pub async fn dynamo_store(config: &Config) -> Result<DynamoScoreStore, ConfigError> {
    let table = config.require_table_name()?;
    Ok(DynamoScoreStore::new(
        aws_sdk_dynamodb::Client::new(&budgeted(config).await),
        table,
    ))
}

/// The standard AWS environment with the budget of every DynamoDB call
/// (`DYNAMODB_TIMEOUT_MS`), for the clients on a request's path: a silent endpoint (a
/// hung node, a dead connection nobody reset) costs a request at most this, then a 503
/// (a write retried with the same match id lands once whether or not the first attempt
/// committed). Each attempt, and opening a connection, gets half of it, so one stuck
/// attempt is retried on a fresh connection within the budget.
async fn budgeted(config: &Config) -> aws_config::SdkConfig {
    let attempt = config.dynamodb_timeout / 2;
    let timeouts = aws_config::timeout::TimeoutConfig::builder()
        .connect_timeout(attempt)
        .operation_attempt_timeout(attempt)
        .operation_timeout(config.dynamodb_timeout)
        .build();
    aws().await.to_builder().timeout_config(timeouts).build()
}

/// The EventBridge bus `EVENT_BUS_NAME` names.
pub async fn event_publisher(config: &Config) -> Result<EventBridgePublisher, ConfigError> {
    let bus = config.require_event_bus_name()?;
    let aws = aws().await;
    Ok(EventBridgePublisher::new(
        aws_sdk_eventbridge::Client::new(aws),
        bus,
    ))
}

/// The events API `LIVE_EVENTS_URL` names, publishing with the function's credentials.
pub async fn broadcaster(
    config: &Config,
) -> Result<crate::adapters::appsync::AppSyncEvents, InitError> {
    let url = config.require_live_events_url()?.to_owned();
    let aws = aws().await;
    let region = aws
        .region()
        .map(|r| r.to_string())
        .unwrap_or_else(|| "us-east-1".into());
    let credentials = aws
        .credentials_provider()
        .ok_or_else(|| InitError::Events("no AWS credentials to sign publishes with".into()))?;
    let http = crate::adapters::tls::http()
        .build()
        .map_err(|e| InitError::Events(e.to_string()))?;
    crate::adapters::appsync::AppSyncEvents::new(http, url, region, credentials)
        .map_err(|e| InitError::Events(e.to_string()))
}

/// The table's stream, from the standard AWS environment (for the repair), with the
/// DynamoDB calls' budget.
pub async fn stream_source(config: &Config) -> DynamoStreams {
    DynamoStreams::new(aws_sdk_dynamodbstreams::Client::new(
        &budgeted(config).await,
    ))
}

/// The context every HTTP function but `boards` runs with in production.
pub type AppContext = Context<DynamoScoreStore, RedisRankIndex>;

#[cfg(test)]
mod tests {
    use super::*;

    fn unset() -> Config {
        Config {
            table_name: None,
            redis_url: None,
            redis_mode: None,
            redis_auth_secret: None,
            redis_iam_cache: None,
            redis_iam_user: None,
            redis_iam_serverless: None,
            redis_tls_ca_file: None,
            redis_key_prefix: String::new(),
            redis_timeout: None,
            redis_connect_timeout: None,
            repair_queue_url: None,
            social_graph_url: None,
            social_graph_timeout: crate::wiring::config::SOCIAL_GRAPH_TIMEOUT,
            dynamodb_timeout: crate::wiring::config::DYNAMODB_TIMEOUT,
            receipt_ttl: None,
            board_cache_ttl: None,
            redis_retention: None,
            max_future_skew: None,
            cursor_secret: None,
            read_cache_ttl: None,
            card_cache_ttl: None,
            reads_per_player: None,
            reads_per_ip: None,
            write_through: None,
            players_set_profiles: None,
            names_on_rows: None,
            event_bus_name: None,
            dead_letter_queue_url: None,
            seal_settle: None,
            live_events_url: None,
            cache_replication_group: None,
            export_bucket: None,
            export_queue_url: None,
            export_part_bytes: None,
            export_link_ttl: None,
            export_settle: None,
        }
    }

    #[test]
    fn unset_tunables_take_the_settings_defaults_and_set_ones_override_them() {
        let d = Settings::default();
        let s = settings(&unset());
        assert_eq!(
            (
                s.receipt_ttl,
                s.read_cache_ttl,
                s.rate_limits,
                s.write_through
            ),
            (
                d.receipt_ttl,
                d.read_cache_ttl,
                d.rate_limits.clone(),
                d.write_through
            )
        );
        let set = Config {
            read_cache_ttl: Some(std::time::Duration::ZERO),
            reads_per_ip: Some(7),
            write_through: Some(false),
            ..unset()
        };
        let s = settings(&set);
        assert_eq!(s.read_cache_ttl, std::time::Duration::ZERO);
        assert_eq!(
            (s.rate_limits.per_ip, s.rate_limits.per_player),
            (7, d.rate_limits.per_player)
        );
        assert!(!s.write_through);
    }
}

/// Building a function's clients at cold start failed.
#[derive(Debug, Error)]
pub enum InitError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("the Redis configuration is invalid: {0}")]
    Redis(#[from] IndexError),
    #[error("the events API configuration is invalid: {0}")]
    Events(String),
    #[error("the social graph client could not be built: {0}")]
    Friends(#[from] FriendsError),
}
