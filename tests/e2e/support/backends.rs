//! Where the run's shared servers are (`infra/test.sh` starts them and passes their
//! addresses in the environment), and clients for them.

use std::path::PathBuf;
use std::time::Duration;

use aws_sdk_dynamodb::config::Credentials;
use leaderboard::adapters::redis::{
    Access, CONNECT_TIMEOUT, Conn, IamAuth, RedisRankIndex, Target, conn,
};

/// Where the servers of this test run are.
pub fn redis_url() -> String {
    required_env("LB_TEST_REDIS_URL")
}

/// The run's 3-master Redis Cluster, as a `redis+cluster://` URL.
pub fn cluster_url() -> String {
    required_env("LB_TEST_REDIS_CLUSTER_URL")
}

/// The index adapter on `url` as a deployment connects: with the URL's password, or,
/// when `LB_TEST_REDIS_IAM` is `cache:key:secret` (the test command's pass through
/// `infra/local/elasticache_iam.py`), with IAM tokens, as the small profile does.
pub fn rank_index(url: &str, prefix: &str, timeout: Duration) -> RedisRankIndex {
    let Some(iam) = std::env::var("LB_TEST_REDIS_IAM")
        .ok()
        .filter(|_| url == redis_url())
    else {
        return RedisRankIndex::new(url, prefix, timeout).expect("redis url");
    };
    let mut parts = iam.splitn(3, ':');
    let (cache, key, secret) = (parts.next(), parts.next(), parts.next());
    let (Some(cache), Some(key), Some(secret)) = (cache, key, secret) else {
        panic!("LB_TEST_REDIS_IAM is cache:key:secret, not {iam}");
    };
    let creds = aws_credential_types::Credentials::new(key, secret, None, None, "test");
    let auth = IamAuth {
        cache: cache.into(),
        user: "default.iam-user".into(),
        region: "us-east-1".into(),
        serverless: true,
        credentials: aws_credential_types::provider::SharedCredentialsProvider::new(creds),
    };
    let access = Access {
        iam: Some(auth),
        ..Access::default()
    };
    let target = Target::parse(url, None).expect("redis url");
    RedisRankIndex::with_target(target, access, prefix, timeout, CONNECT_TIMEOUT)
        .expect("redis url")
}

/// A raw connection for inspecting or changing Redis behind the adapter's back, on
/// either topology (straight to the server behind the IAM stand-in, in that pass:
/// `LB_TEST_REDIS_RAW_URL`).
pub async fn raw_redis(url: &str) -> Conn {
    let raw = std::env::var("LB_TEST_REDIS_RAW_URL").ok();
    let url = match raw {
        Some(raw) if url == redis_url() => raw,
        _ => url.to_owned(),
    };
    let target = Target::parse(&url, None).expect("redis url");
    conn::connect(&target, &Access::default(), Duration::from_secs(2))
        .await
        .expect("connect to the test Redis")
}

/// Whether `key` is in Redis.
pub async fn key_exists(conn: &mut Conn, key: &str) -> bool {
    let n: u64 = redis::cmd("EXISTS")
        .arg(key)
        .query_async(conn)
        .await
        .expect("EXISTS");
    n == 1
}

/// The DynamoDB endpoint this test process uses: one of `LB_TEST_DYNAMODB_URLS` (a
/// comma-separated list; infra/test.sh starts three, one per test it runs at once, as a
/// Python process bounds the suite), the same for the whole process, or else
/// `LB_TEST_DYNAMODB_URL`. Everything a test makes lives on the endpoint it chose.
///
/// Chosen by nextest's global slot (`NEXTEST_TEST_GLOBAL_SLOT`: unique among the tests
/// running at once), so the three tests beside each other each have an endpoint of their
/// own; by the process id outside nextest. Chosen by the process id alone, two of three
/// tests shared an endpoint most of the time, and a family's creation in one of them
/// waited past its 1 s budget there (a 503 in CI).
pub fn dynamodb_url() -> String {
    let urls = std::env::var("LB_TEST_DYNAMODB_URLS").unwrap_or_default();
    let urls: Vec<&str> = urls.split(',').filter(|u| !u.is_empty()).collect();
    let slot = std::env::var("NEXTEST_TEST_GLOBAL_SLOT")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .unwrap_or(std::process::id() as usize);
    match urls.len() {
        0 => required_env("LB_TEST_DYNAMODB_URL"),
        n => urls[slot % n].to_owned(),
    }
}

/// The run's Kafka broker (`host:port`).
pub fn kafka_bootstrap() -> String {
    required_env("LB_TEST_KAFKA")
}

/// The project venv's Python (`LB_TEST_PYTHON`), which runs the local stack's scripts.
pub fn python() -> PathBuf {
    std::env::var("LB_TEST_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| root().join(".venv/bin/python"))
}

pub(super) fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with infra/test.sh, which starts the servers")
    })
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

pub(super) fn credentials() -> Credentials {
    Credentials::new("local", "local", None, None, "e2e")
}

pub(super) async fn aws_config() -> aws_config::SdkConfig {
    aws_config_at(&dynamodb_url()).await
}

pub(super) async fn aws_config_at(url: &str) -> aws_config::SdkConfig {
    aws_config_as(url, credentials()).await
}

pub(super) async fn aws_config_as(url: &str, credentials: Credentials) -> aws_config::SdkConfig {
    leaderboard::wiring::aws_defaults()
        .endpoint_url(url)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(credentials)
        .load()
        .await
}

/// A Secrets Manager client on the local endpoint (moto serves it beside DynamoDB).
pub async fn secrets_client(url: &str) -> aws_sdk_secretsmanager::Client {
    aws_sdk_secretsmanager::Client::new(&aws_config_at(url).await)
}

/// EventBridge and SQS clients on the local endpoint (moto serves them beside DynamoDB).
pub async fn events_clients(url: &str) -> (aws_sdk_eventbridge::Client, aws_sdk_sqs::Client) {
    let config = aws_config_at(url).await;
    (
        aws_sdk_eventbridge::Client::new(&config),
        aws_sdk_sqs::Client::new(&config),
    )
}

pub async fn dynamodb_client_at(url: &str) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&aws_config_at(url).await)
}

/// A DynamoDB client signing with `access_key`: `fn-<LogicalId>` is what the local stack
/// gives a function, and the endpoint then allows only what its role allows.
pub async fn dynamodb_client_as(url: &str, access_key: &str) -> aws_sdk_dynamodb::Client {
    let credentials = Credentials::new(access_key, "local", None, None, "e2e");
    aws_sdk_dynamodb::Client::new(&aws_config_as(url, credentials).await)
}

pub(super) async fn streams_client() -> aws_sdk_dynamodbstreams::Client {
    aws_sdk_dynamodbstreams::Client::new(&aws_config().await)
}
