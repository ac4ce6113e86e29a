//! Test helpers. Every test gets its own DynamoDB table and Redis key prefix, so tests
//! run in parallel against the servers `infra/test.sh` starts (their addresses come in
//! `LB_TEST_REDIS_URL`, `LB_TEST_REDIS_CLUSTER_URL` and `LB_TEST_DYNAMODB_URL`).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use aws_lambda_events::event::dynamodb::{Event, EventRecord};
use aws_sdk_dynamodb::config::Credentials;
use aws_sdk_dynamodb::types::AttributeValue;
use leaderboard::board::{Board, BoardStatus, Policy};
use leaderboard::dynamodb::{DynamoScoreStore, SHARDS, StandingItem, lambda_record};
use leaderboard::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard::redis::{Access, Conn, RedisRankIndex, Target, conn};
use leaderboard::score::Score;
use leaderboard::service::boards::{self, CreateFamily, Created, SeasonBody};
use leaderboard::service::ingest::{IngestReply, SubmitScore};
use leaderboard::service::scores::{self, MatchReply, MatchResult};
use leaderboard::service::{AppContext, Context, Settings, ingest};
use leaderboard::store::{RankIndex, ScoreStore};
use leaderboard::window::Period;
use tokio::io::{AsyncBufReadExt, BufReader};

/// Where the servers of this test run are.
pub fn redis_url() -> String {
    required_env("LB_TEST_REDIS_URL")
}

/// The run's 3-master Redis Cluster, as a `redis+cluster://` URL.
pub fn cluster_url() -> String {
    required_env("LB_TEST_REDIS_CLUSTER_URL")
}

/// Declares a test module per scenario that runs it on both topologies: `single` against
/// the run's redis-server, `cluster` against its Redis Cluster. Each scenario is an
/// `async fn(redis_url: &str)`.
#[macro_export]
macro_rules! on_both_topologies {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test]
                async fn single() {
                    super::$scenario(&$crate::support::redis_url()).await;
                }

                #[tokio::test]
                async fn cluster() {
                    super::$scenario(&$crate::support::cluster_url()).await;
                }
            }
        )*
    };
}

/// A raw connection for inspecting or changing Redis behind the adapter's back, on
/// either topology.
pub async fn raw_redis(url: &str) -> Conn {
    let target = Target::parse(url, None).expect("redis url");
    conn::connect(&target, &Access::default(), Duration::from_secs(2))
        .await
        .expect("connect to the test Redis")
}

pub fn dynamodb_url() -> String {
    required_env("LB_TEST_DYNAMODB_URL")
}

fn required_env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!("{name} is not set: run the tests with infra/test.sh, which starts the servers")
    })
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A name no other test (or test run) uses; valid as a table name, id and key prefix.
pub fn unique(tag: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{tag}-{}-{nanos}-{n}", std::process::id())
}

pub fn lb(raw: &str) -> LeaderboardId {
    LeaderboardId::parse(raw).expect("test board id")
}

pub fn player(raw: &str) -> PlayerId {
    PlayerId::parse(raw).expect("test player id")
}

pub fn score(v: i64) -> Score {
    Score::new("score", v).expect("test score")
}

/// A small deterministic generator for shuffles and picks.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

fn credentials() -> Credentials {
    Credentials::new("local", "local", None, None, "e2e")
}

async fn aws_config() -> aws_config::SdkConfig {
    aws_config_at(&dynamodb_url()).await
}

async fn aws_config_at(url: &str) -> aws_config::SdkConfig {
    aws_config_as(url, credentials()).await
}

async fn aws_config_as(url: &str, credentials: Credentials) -> aws_config::SdkConfig {
    aws_config::defaults(aws_config::BehaviorVersion::latest())
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

pub async fn dynamodb_client_at(url: &str) -> aws_sdk_dynamodb::Client {
    aws_sdk_dynamodb::Client::new(&aws_config_at(url).await)
}

/// A DynamoDB client signing with `access_key`: `fn-<LogicalId>` is what the local stack
/// gives a function, and the endpoint then allows only what its role allows.
pub async fn dynamodb_client_as(url: &str, access_key: &str) -> aws_sdk_dynamodb::Client {
    let credentials = Credentials::new(access_key, "local", None, None, "e2e");
    aws_sdk_dynamodb::Client::new(&aws_config_as(url, credentials).await)
}

async fn streams_client() -> aws_sdk_dynamodbstreams::Client {
    aws_sdk_dynamodbstreams::Client::new(&aws_config().await)
}

/// One test's world: its own table, its own key prefix, the production adapters.
pub struct TestEnv {
    pub ctx: AppContext,
    pub prefix: String,
    pub redis: Conn,
}

/// A friends source with a fixed list (the HTTP social graph has its own tests).
pub struct FixedFriends(pub Vec<PlayerId>);

impl leaderboard::store::FriendsSource for FixedFriends {
    async fn friends_of(
        &self,
        _: &PlayerId,
    ) -> Result<Vec<PlayerId>, leaderboard::error::FriendsError> {
        Ok(self.0.clone())
    }
}

/// Settings for tests that look at the index and its fallbacks through the use cases:
/// the reply cache off, so each read shows the backends as they are now. The cache has
/// its own tests (`hot`), and the HTTP stacks run with it on, as deployed.
pub fn uncached() -> Settings {
    Settings {
        read_cache_ttl: Duration::ZERO,
        ..Settings::default()
    }
}

impl TestEnv {
    pub async fn new() -> Self {
        Self::on(&redis_url()).await
    }

    /// A new table and key prefix, with the index on the Redis (or cluster) at `redis_url`.
    pub async fn on(redis_url: &str) -> Self {
        let env = Self::attach(
            redis_url,
            &dynamodb_url(),
            &unique("t"),
            &format!("{}:", unique("k")),
        )
        .await;
        env.ctx
            .store
            .create_table()
            .await
            .expect("create the test table");
        env
    }

    /// The adapters over an existing table and key prefix (e.g. a [`Stack`]'s), with a
    /// 2 s Redis budget.
    pub async fn attach(redis_url: &str, dynamodb_url: &str, table: &str, prefix: &str) -> Self {
        let store = DynamoScoreStore::new(dynamodb_client_at(dynamodb_url).await, table);
        let index =
            RedisRankIndex::new(redis_url, prefix, Duration::from_secs(2)).expect("redis url");
        let redis = raw_redis(redis_url).await;
        Self {
            ctx: Context::new(store, index, uncached()),
            prefix: prefix.to_owned(),
            redis,
        }
    }

    /// A new ACTIVE board with `policy`.
    pub async fn board(&self, policy: Policy) -> LeaderboardId {
        let id = lb(&unique("b"));
        let board = Board {
            leaderboard_id: id.clone(),
            policy,
            status: BoardStatus::Active,
            created_at: 0,
            window: None,
        };
        let existing = self
            .ctx
            .store
            .create_board(&board)
            .await
            .expect("create board");
        assert!(existing.is_none());
        // As the boards function does for a new board: its (empty) index is complete.
        self.ctx
            .index
            .init_board(&id, None)
            .await
            .expect("mark the index");
        id
    }

    /// A new family (unique game name) with `periods`, regions NA and EU, the given
    /// season and grace; returns its game and mode.
    pub async fn family(
        &self,
        policy: Policy,
        periods: &[Period],
        season: Option<(i64, i64)>,
        grace_seconds: i64,
    ) -> (String, String) {
        let game = unique("g").replace(['-'], "_");
        let game = game[game.len().saturating_sub(30)..].to_owned();
        let req = CreateFamily {
            game: game.clone(),
            mode: "ranked".into(),
            policy,
            regions: vec!["NA".into(), "EU".into()],
            periods: periods.to_vec(),
            season: season.map(|(start, end)| SeasonBody {
                id: "s1".into(),
                start: start.into(),
                end: end.into(),
            }),
            grace_seconds,
        };
        let created = boards::create_family(&self.ctx.store, req)
            .await
            .expect("create family");
        assert!(matches!(created, Created::New(_)));
        (game, "ranked".into())
    }

    /// One match result through the fan-out.
    pub async fn submit_match(
        &self,
        (game, mode): &(String, String),
        region: &str,
        p: &str,
        match_id: &str,
        value: i64,
        event_ts: Option<i64>,
    ) -> Result<MatchReply, leaderboard::error::ServiceError> {
        let m = MatchResult {
            game: game.clone(),
            mode: mode.clone(),
            region: region.into(),
            player: player(p),
            match_id: MatchId::parse(match_id).expect("test match id"),
            score: score(value),
            event_ts,
        };
        scores::submit_match(&self.ctx, m).await
    }

    pub async fn submit(
        &self,
        board: &LeaderboardId,
        p: &str,
        match_id: &str,
        value: i64,
    ) -> Result<IngestReply, leaderboard::error::ServiceError> {
        let req = SubmitScore {
            board: board.clone(),
            player: player(p),
            match_id: MatchId::parse(match_id).expect("test match id"),
            score: score(value),
            event_ts: None,
            want_previous_rank: false,
            reached_at: None,
        };
        ingest::submit_score(&self.ctx, req).await
    }

    /// `players` standings on `board` (a descending board), written straight into
    /// DynamoDB (their stream records follow as for any write): player `s{i:05}` with a
    /// score spread over 0..100,000.
    pub async fn seed_standings(&self, board: &LeaderboardId, players: u64) -> Result<()> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        let items: Vec<WriteRequest> = (0..players)
            .map(|i| {
                let standing = leaderboard::board::Standing {
                    score: score((i * 7_919 % 100_000) as i64),
                    reached_at: 1_700_000_000_000 + i as i64,
                    version: 1,
                    last_match_id: MatchId::parse("seed").expect("match id"),
                };
                let item = StandingItem::new(
                    board,
                    &player(&format!("s{i:05}")),
                    leaderboard::order::Direction::Desc,
                    &standing,
                    None,
                );
                let put = PutRequest::builder()
                    .set_item(Some(serde_dynamo::to_item(item).expect("item")))
                    .build()
                    .expect("put request");
                WriteRequest::builder().put_request(put).build()
            })
            .collect();
        for chunk in items.chunks(25) {
            self.ctx
                .store
                .client()
                .batch_write_item()
                .request_items(self.ctx.store.table(), chunk.to_vec())
                .send()
                .await?;
        }
        Ok(())
    }

    /// Every standing of a board, read from DynamoDB (all shards).
    pub async fn standings(&self, board: &LeaderboardId) -> Vec<StandingItem> {
        let mut out = Vec::new();
        for shard in 0..SHARDS {
            let mut pages = self
                .ctx
                .store
                .client()
                .query()
                .table_name(self.ctx.store.table())
                .key_condition_expression("pk = :pk")
                .expression_attribute_values(
                    ":pk",
                    AttributeValue::S(format!("S#{board}#{shard:02}")),
                )
                .consistent_read(true)
                .into_paginator()
                .items()
                .send();
            while let Some(item) = pages.next().await {
                let item = item.expect("query standings");
                out.push(serde_dynamo::from_item(item).expect("decode standing"));
            }
        }
        out
    }

    /// The whole stream of the table, oldest first, as Lambda would deliver it.
    pub async fn stream_records(&self) -> Vec<EventRecord> {
        let table = self
            .ctx
            .store
            .client()
            .describe_table()
            .table_name(self.ctx.store.table())
            .send()
            .await
            .expect("describe table");
        let arn = table
            .table()
            .and_then(|t| t.latest_stream_arn())
            .expect("stream arn");
        let streams = streams_client().await;
        let desc = streams
            .describe_stream()
            .stream_arn(arn)
            .send()
            .await
            .expect("describe stream");
        let mut records = Vec::new();
        for shard in desc
            .stream_description()
            .map(|d| d.shards())
            .unwrap_or_default()
        {
            let mut iterator = streams
                .get_shard_iterator()
                .stream_arn(arn)
                .shard_id(shard.shard_id().unwrap_or_default())
                .shard_iterator_type(aws_sdk_dynamodbstreams::types::ShardIteratorType::TrimHorizon)
                .send()
                .await
                .expect("shard iterator")
                .shard_iterator;
            while let Some(it) = iterator {
                let page = streams
                    .get_records()
                    .shard_iterator(it)
                    .send()
                    .await
                    .expect("get records");
                if page.records().is_empty() {
                    break;
                }
                records.extend(page.records().iter().map(lambda_record));
                iterator = page.next_shard_iterator;
            }
        }
        records
    }

    /// Deletes the board's keys from Redis (as a FLUSHALL would, for this test only).
    pub async fn wipe_index(&self, board: &LeaderboardId) {
        let (z, h) = self.ctx.index.keys(board);
        let m = self.ctx.index.marker_key(board);
        let mut conn = self.redis.clone();
        let _: () = redis::cmd("DEL")
            .arg(&z)
            .arg(&h)
            .arg(&m)
            .query_async(&mut conn)
            .await
            .expect("DEL");
    }

    /// The index as Redis holds it: players in sorted-set order, and each hash entry.
    pub async fn index_snapshot(
        &self,
        board: &LeaderboardId,
    ) -> (Vec<String>, BTreeMap<String, String>) {
        self.try_index_snapshot(board)
            .await
            .expect("read the index")
    }

    /// [`TestEnv::index_snapshot`], or Redis' error (a test that restarts Redis sees its
    /// connection dropped once).
    pub async fn try_index_snapshot(
        &self,
        board: &LeaderboardId,
    ) -> redis::RedisResult<(Vec<String>, BTreeMap<String, String>)> {
        let (z, h) = self.ctx.index.keys(board);
        let mut conn = self.redis.clone();
        let members: Vec<String> = redis::cmd("ZRANGE")
            .arg(&z)
            .arg(0)
            .arg(-1)
            .query_async(&mut conn)
            .await?;
        let hash: HashMap<String, String> =
            redis::cmd("HGETALL").arg(&h).query_async(&mut conn).await?;
        Ok((members, hash.into_iter().collect()))
    }

    /// Asserts that Redis holds exactly DynamoDB's standings of `board`, in the
    /// documented order, and returns how many players were compared.
    pub async fn assert_index_matches_store(&self, board: &LeaderboardId) -> usize {
        match self.index_vs_store(board).await {
            Ok(n) => n,
            Err(diff) => panic!("{diff}"),
        }
    }

    /// Compares Redis (sorted-set order and every hash entry) with DynamoDB's standings.
    pub async fn index_vs_store(&self, board: &LeaderboardId) -> Result<usize, String> {
        let mut standings = self.standings(board).await;
        let dir = standings
            .first()
            .map_or(leaderboard::order::Direction::Desc, |s| s.direction);
        standings.sort_by(|a, b| a.index_entry().key.cmp_in(&b.index_entry().key, dir));
        let (members, hash) = self
            .try_index_snapshot(board)
            .await
            .map_err(|e| format!("reading the index: {e}"))?;
        let expected_members: Vec<String> = standings
            .iter()
            .map(|s| s.index_entry().key.member())
            .collect();
        if members != expected_members {
            return Err(format!(
                "sorted-set order differs from DynamoDB: redis {} entries, dynamodb {}",
                members.len(),
                expected_members.len()
            ));
        }
        let expected_hash: BTreeMap<String, String> = standings
            .iter()
            .map(|s| {
                let e = s.index_entry();
                let value = format!(
                    "{}|{}|{}",
                    e.version,
                    e.key.zscore(e.direction),
                    e.key.member()
                );
                (s.player_id.to_string(), value)
            })
            .collect();
        if hash != expected_hash {
            let differing = expected_hash
                .iter()
                .filter(|(k, v)| hash.get(*k) != Some(v))
                .count();
            return Err(format!(
                "hash (player -> version|zscore|member) differs for {differing} players"
            ));
        }
        Ok(standings.len())
    }
}

/// A Lambda DynamoDB event holding `records`.
pub fn event(records: Vec<EventRecord>) -> Event {
    let mut e = Event::default();
    e.records = records;
    e
}

/// A descending board's index entry: `p` at score `s`, reached at 1000 + version.
pub fn index_entry(
    board: &LeaderboardId,
    p: &str,
    s: i64,
    version: u64,
) -> leaderboard::store::IndexEntry {
    leaderboard::store::IndexEntry {
        board: board.clone(),
        direction: leaderboard::order::Direction::Desc,
        key: leaderboard::order::RankKey {
            score: score(s),
            reached_at: 1_000 + version as i64,
            player: p.into(),
        },
        version,
        expire_at: None,
    }
}

/// The player ids of a reply's rows (`entries`, `neighbours`), in order.
pub fn players(v: &serde_json::Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| r["player_id"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// A free loopback port (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// A redis-server of the test's own (for tests that kill and restart one).
pub struct OwnRedis {
    pub port: u16,
    /// Its data directory, when it keeps its data across a restart.
    dir: Option<PathBuf>,
    child: Option<std::process::Child>,
}

/// Sends `sig` (`-STOP`, `-CONT`, `-KILL`) to a process.
fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .arg(sig)
        .arg(pid.to_string())
        .status();
}

impl OwnRedis {
    /// Reserves a port without starting the server yet; the server keeps nothing across
    /// a restart.
    pub fn reserve() -> Self {
        Self {
            port: free_port(),
            dir: None,
            child: None,
        }
    }

    /// Like [`OwnRedis::reserve`], with a data directory of its own, so that
    /// [`OwnRedis::shutdown_saving`] and `start` bring it back with its data.
    pub fn persistent() -> Self {
        Self {
            port: free_port(),
            dir: Some(root().join("target/e2e-run").join(unique("redis"))),
            child: None,
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub async fn start(&mut self) -> Result<()> {
        let mut cmd = std::process::Command::new("redis-server");
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"]);
        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir)?;
            cmd.arg("--dir").arg(dir).args(["--dbfilename", "dump.rdb"]);
        }
        let child = cmd
            .stdout(Stdio::null())
            .spawn()
            .context("start redis-server (is it installed? infra/test.sh installs it)")?;
        self.child = Some(child);
        wait_for_tcp(self.port, Duration::from_secs(10)).await
    }

    /// Kills the server (SIGKILL): its data is gone; `start` again brings an empty one
    /// up on the same port.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the server the way an operator would, saving its data first (`SHUTDOWN
    /// SAVE`); a persistent server's `start` then loads it back.
    pub async fn shutdown_saving(&mut self) -> Result<()> {
        let mut conn = redis::Client::open(self.url())?
            .get_multiplexed_async_connection()
            .await?;
        // The server closes the connection instead of answering.
        let _ = redis::cmd("SHUTDOWN")
            .arg("SAVE")
            .query_async::<redis::Value>(&mut conn)
            .await;
        if let Some(mut c) = self.child.take() {
            c.wait()?;
        }
        Ok(())
    }

    /// Freezes the server (SIGSTOP): connections hang, as with a stalled Redis.
    pub fn pause(&self) {
        if let Some(c) = &self.child {
            signal(c.id(), "-STOP");
        }
    }

    /// Lets a paused server run again, with all its data.
    pub fn resume(&self) {
        if let Some(c) = &self.child {
            signal(c.id(), "-CONT");
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A Redis Cluster of the test's own (for tests that move slots between its nodes or
/// fail a master over): masters with the slots split evenly, each with its replicas.
/// Stopped on drop.
pub struct OwnCluster {
    /// The masters' ports, in slot order.
    pub ports: Vec<u16>,
    /// The replicas' ports, with the port of the master each replicates.
    pub replicas: Vec<(u16, u16)>,
    dir: PathBuf,
    children: Vec<(u16, std::process::Child)>,
}

/// A free port whose cluster bus port (+10000) is free too, below the ephemeral range
/// (and apart from the range `infra/test.sh` picks its cluster from).
fn free_cluster_port(taken: &[u16]) -> u16 {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    let mut rng = Rng::new(std::process::id() as u64 ^ u64::from(free_port()));
    loop {
        let p = 22_000 + rng.below(2_000) as u16;
        if !taken.contains(&p) && free(p) && free(p + 10_000) {
            return p;
        }
    }
}

impl OwnCluster {
    /// `masters` masters, no replicas.
    pub async fn start(masters: usize) -> Result<Self> {
        Self::start_with(masters, 0).await
    }

    /// `masters` masters with `replicas` replicas each. Nodes fail over quickly (1 s node
    /// timeout) and a replica may take over however long it was cut off from its master
    /// (validity factor 0), so a test decides what a promoted replica lacks.
    pub async fn start_with(masters: usize, replicas: usize) -> Result<Self> {
        let dir = root().join("target/e2e-run").join(unique("cluster"));
        std::fs::create_dir_all(&dir)?;
        let mut me = Self {
            ports: Vec::new(),
            replicas: Vec::new(),
            dir,
            children: Vec::new(),
        };
        let mut all = Vec::new();
        for i in 0..masters * (1 + replicas) {
            let port = free_cluster_port(&all);
            let child = std::process::Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args([
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "1000",
                    "--cluster-replica-validity-factor",
                    "0",
                ])
                .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                .arg("--dir")
                .arg(&me.dir)
                .stdout(Stdio::null())
                .spawn()
                .context("start redis-server in cluster mode")?;
            all.push(port);
            me.children.push((port, child));
            if i < masters {
                me.ports.push(port);
            } else {
                me.replicas.push((port, me.ports[(i - masters) % masters]));
            }
        }
        for &port in &all {
            wait_for_tcp(port, Duration::from_secs(10)).await?;
        }
        let per = 16_384 / masters;
        for (i, &port) in me.ports.iter().enumerate() {
            let lo = i * per;
            let hi = if i + 1 == masters {
                16_383
            } else {
                lo + per - 1
            };
            let _: () = me
                .query(
                    port,
                    redis::cmd("CLUSTER").arg("ADDSLOTSRANGE").arg(lo).arg(hi),
                )
                .await?;
            // Distinct config epochs, as `redis-cli --cluster create` gives them: left
            // equal, the nodes settle their collision later, and a slot moved meanwhile can
            // lose its keys (the importing node yields the slot and deletes them).
            let _: () = me
                .query(
                    port,
                    redis::cmd("CLUSTER").arg("SET-CONFIG-EPOCH").arg(i + 1),
                )
                .await?;
        }
        for &port in &all[1..] {
            let _: () = me
                .query(
                    all[0],
                    redis::cmd("CLUSTER").arg("MEET").arg("127.0.0.1").arg(port),
                )
                .await?;
        }
        let known = format!("cluster_known_nodes:{}", all.len());
        eventually(Duration::from_secs(30), "the nodes to meet", || async {
            for &port in &all {
                let info: String = me.query(port, redis::cmd("CLUSTER").arg("INFO")).await?;
                if !info.contains(&known) {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
        .await?;
        for &(replica, master) in &me.replicas {
            let id = me.id_of(master).await?;
            let _: () = me
                .query(replica, redis::cmd("CLUSTER").arg("REPLICATE").arg(&id))
                .await?;
        }
        eventually(Duration::from_secs(30), "the cluster to form", || async {
            for &port in &all {
                let info: String = me.query(port, redis::cmd("CLUSTER").arg("INFO")).await?;
                if !info.contains("cluster_state:ok") {
                    return Ok(None);
                }
            }
            for &(replica, _) in &me.replicas {
                let info: String = me
                    .query(replica, redis::cmd("INFO").arg("replication"))
                    .await?;
                if !info.contains("master_link_status:up") {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
        .await?;
        Ok(me)
    }

    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", hosts.join(","))
    }

    /// `cmd` sent to one node as it is (no redirections followed).
    pub async fn query<T: redis::FromRedisValue>(&self, port: u16, cmd: &redis::Cmd) -> Result<T> {
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}"))?
            .get_multiplexed_async_connection()
            .await?;
        Ok(cmd.query_async(&mut c).await?)
    }

    /// The node's cluster id.
    pub async fn id_of(&self, port: u16) -> Result<String> {
        self.query(port, redis::cmd("CLUSTER").arg("MYID")).await
    }

    /// The port of the node that serves `slot`, as the nodes that answer say.
    pub async fn owner_of(&self, slot: u16) -> Result<u16> {
        let ports = self.children.iter().map(|(p, _)| *p).collect::<Vec<_>>();
        for port in ports {
            let Ok(nodes) = self
                .query::<String>(port, redis::cmd("CLUSTER").arg("NODES"))
                .await
            else {
                continue;
            };
            let mine = nodes
                .lines()
                .find(|l| l.contains("myself"))
                .context("myself")?;
            if !mine.contains("master") {
                continue;
            }
            let owns = mine.split_whitespace().skip(8).any(|range| {
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                match (lo.parse::<u16>(), hi.parse::<u16>()) {
                    (Ok(lo), Ok(hi)) => (lo..=hi).contains(&slot),
                    _ => false,
                }
            });
            if owns {
                return Ok(port);
            }
        }
        bail!("no node serves slot {slot}")
    }

    fn pid_of(&self, port: u16) -> Option<u32> {
        self.children
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, c)| c.id())
    }

    /// Freezes one node (SIGSTOP).
    pub fn pause(&self, port: u16) {
        self.pid_of(port)
            .into_iter()
            .for_each(|pid| signal(pid, "-STOP"));
    }

    /// Lets a frozen node run again.
    pub fn resume(&self, port: u16) {
        self.pid_of(port)
            .into_iter()
            .for_each(|pid| signal(pid, "-CONT"));
    }

    /// Kills one node (SIGKILL).
    pub fn kill(&mut self, port: u16) {
        if let Some(i) = self.children.iter().position(|(p, _)| *p == port) {
            let (_, mut c) = self.children.remove(i);
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A DynamoDB endpoint of the test's own (`dynamodb_server.py` with a state file), for
/// tests that stop and restart it.
pub struct OwnDynamo {
    pub port: u16,
    state: PathBuf,
    child: Option<std::process::Child>,
}

impl OwnDynamo {
    pub async fn start_new() -> Result<Self> {
        let mut me = Self {
            port: free_port(),
            state: root()
                .join("target/e2e-run")
                .join(format!("{}.state", unique("ddb"))),
            child: None,
        };
        me.start().await?;
        Ok(me)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts it (again), loading the state a graceful stop saved.
    pub async fn start(&mut self) -> Result<()> {
        std::fs::create_dir_all(self.state.parent().context("state dir")?)?;
        let python = std::env::var("LB_TEST_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root().join(".venv/bin/python"));
        let child = std::process::Command::new(python)
            .arg(root().join("infra/local/dynamodb_server.py"))
            .args(["--port", &self.port.to_string()])
            .arg("--state-file")
            .arg(&self.state)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start dynamodb_server.py")?;
        self.child = Some(child);
        wait_for_tcp(self.port, Duration::from_secs(30)).await
    }

    /// Stops it gracefully (SIGTERM): it saves its tables first.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = std::process::Command::new("kill")
                .arg("-TERM")
                .arg(c.id().to_string())
                .status();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnDynamo {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.state);
    }
}

pub async fn wait_for_tcp(port: u16, within: Duration) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < within {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("nothing listens on port {port} after {within:?}")
}

/// The local stack (`infra/local/stack.py`): API Gateway shim, the functions as real
/// processes, the stream mapping and the social-graph stand-in, on free ports, with the
/// test's own table and key prefix. Stopped (with its functions) on drop.
pub struct Stack {
    child: tokio::process::Child,
    pub api: String,
    pub social: String,
    pub http: reqwest::Client,
    /// The stack's own table and key prefix, to inspect its state.
    pub table: String,
    pub prefix: String,
    /// Where the stack and its functions log.
    pub run_dir: PathBuf,
}

/// How to start a [`Stack`].
#[derive(Default)]
pub struct StackOptions<'a> {
    /// Another DynamoDB endpoint than the shared one (a test's own).
    pub dynamodb_url: Option<String>,
    /// Environment for the stack and its functions.
    pub env: &'a [(&'a str, &'a str)],
    /// Run `rate()` schedules (the rebuild sweep) this often, in seconds.
    pub schedule_every: Option<f64>,
    /// Processes per function (default 1).
    pub workers: Option<u32>,
}

pub const API_KEY: &str = "e2e-key";

impl Stack {
    pub async fn start(redis_url: &str) -> Result<Self> {
        Self::start_with(redis_url, &[]).await
    }

    /// Like [`Stack::start`], with extra environment for the stack and its functions.
    pub async fn start_with(redis_url: &str, env: &[(&str, &str)]) -> Result<Self> {
        Self::launch(
            redis_url,
            StackOptions {
                env,
                ..Default::default()
            },
        )
        .await
    }

    pub async fn launch(redis_url: &str, opts: StackOptions<'_>) -> Result<Self> {
        let root = root();
        let table = unique("t");
        let prefix = format!("{}:", unique("k"));
        let schedule = opts
            .schedule_every
            .map(|s| s.to_string())
            .unwrap_or_else(|| "3600".into());
        let python = std::env::var("LB_TEST_PYTHON")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join(".venv/bin/python"));
        let bin_dir = std::env::var("LB_TEST_BIN_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("target/debug"));
        let run_dir = root.join("target/e2e-run").join(unique("stack"));
        std::fs::create_dir_all(&run_dir)?;
        let mut child = tokio::process::Command::new(python)
            .arg(root.join("infra/local/stack.py"))
            .args(["--port", "0", "--social-port", "0"])
            .arg("--workers")
            .arg(opts.workers.unwrap_or(1).to_string())
            .args(["--poll-interval", "0.1"])
            .arg("--table")
            .arg(&table)
            .arg("--key-prefix")
            .arg(&prefix)
            .arg("--schedule-every")
            .arg(schedule)
            .arg("--dynamodb-url")
            .arg(opts.dynamodb_url.unwrap_or_else(dynamodb_url))
            .arg("--redis-url")
            .arg(redis_url)
            .arg("--api-key")
            .arg(API_KEY)
            .arg("--bin-dir")
            .arg(bin_dir)
            .arg("--run-dir")
            .arg(&run_dir)
            .envs(opts.env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(run_dir.join("stack.err"))?)
            .kill_on_drop(true)
            .spawn()
            .context("start infra/local/stack.py")?;
        let stdout = child.stdout.take().context("stack stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(rest) = line.strip_prefix("READY ") {
                    return Ok::<_, anyhow::Error>(Some(rest.to_owned()));
                }
            }
            Ok(None)
        })
        .await
        .context("stack did not get ready in 60 s")??
        .with_context(|| {
            format!(
                "stack exited early; see {}",
                run_dir.join("stack.err").display()
            )
        })?;
        let field = |name: &str| {
            ready
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_owned))
                .with_context(|| format!("READY line without {name}: {ready}"))
        };
        Ok(Self {
            api: field("api")?,
            social: field("social")?,
            child,
            http: reqwest::Client::new(),
            table,
            prefix,
            run_dir,
        })
    }

    /// A request to the API; server-only routes get the API key.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, serde_json::Value)> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("x-api-key", API_KEY);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let text = resp.text().await?;
        let json = serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?;
        Ok((status, json))
    }

    /// A GET with extra headers (e.g. `x-player-id`, the local stand-in for a JWT
    /// subject); returns the response headers too.
    pub async fn get_with(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<(u16, reqwest::header::HeaderMap, serde_json::Value)> {
        let mut req = self.http.get(format!("{}{path}", self.api));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let head = resp.headers().clone();
        let text = resp.text().await?;
        let json = serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?;
        Ok((status, head, json))
    }

    /// A new BEST board (201 asserted); its id starts with `tag`.
    pub async fn create_board(&self, tag: &str) -> Result<String> {
        let lb = unique(tag);
        let (status, body) = self
            .post(
                "/leaderboards",
                serde_json::json!({"leaderboard_id": lb, "policy": "BEST"}),
            )
            .await?;
        assert_eq!(status, 201, "{body}");
        Ok(lb)
    }

    /// Posts one match result (200 asserted) and returns the receipt.
    pub async fn post_score(
        &self,
        lb: &str,
        p: &str,
        m: &str,
        s: i64,
    ) -> Result<serde_json::Value> {
        let (status, body) = self
            .post(
                &format!("/leaderboards/{lb}/players/{p}/score"),
                serde_json::json!({"new_score": s, "match_id": m}),
            )
            .await?;
        assert_eq!(status, 200, "{body}");
        Ok(body)
    }

    pub async fn get(&self, path: &str) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn post(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn patch(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::PATCH, path, Some(body)).await
    }

    /// Follows `next_cursor` from `path` (which already has a query string) to the end,
    /// collecting `field` of every row of the `rows` array.
    pub async fn walk(&self, path: &str, rows: &str, field: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let q = cursor.map(|c| format!("&cursor={c}")).unwrap_or_default();
            let (status, page) = self.get(&format!("{path}{q}")).await?;
            anyhow::ensure!(status == 200, "GET {path}: {status} {page}");
            for row in page[rows].as_array().into_iter().flatten() {
                out.push(row[field].as_str().unwrap_or_default().to_owned());
            }
            cursor = page["next_cursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return Ok(out);
            }
        }
    }

    /// How many lines of the stack's or a function's log (`stack.err`,
    /// `RepairFunction.log`, ...) contain `text`.
    pub fn log_lines(&self, file: &str, text: &str) -> usize {
        std::fs::read_to_string(self.run_dir.join(file))
            .map(|log| log.lines().filter(|l| l.contains(text)).count())
            .unwrap_or(0)
    }

    /// Stream records the projector has taken so far (applied, stale, skipped or
    /// poison), from its log.
    pub fn projected_records(&self) -> u64 {
        let log =
            std::fs::read_to_string(self.run_dir.join("ProjectorFunction.log")).unwrap_or_default();
        log.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["fields"]["message"] == "batch projected")
            .map(|v| {
                ["applied", "stale", "skipped", "poison"]
                    .iter()
                    .map(|k| v["fields"][k].as_u64().unwrap_or(0))
                    .sum::<u64>()
            })
            .sum()
    }

    /// The adapters over this stack's own table and keys, to compare its state.
    pub async fn inspect(&self, redis_url: &str, dynamodb_url: &str) -> TestEnv {
        TestEnv::attach(redis_url, dynamodb_url, &self.table, &self.prefix).await
    }

    /// Sets a player's friends in the social-graph stand-in.
    pub async fn set_friends(&self, p: &str, friends: &[&str]) -> Result<()> {
        let resp = self
            .http
            .put(format!("{}/players/{p}/friends", self.social))
            .json(&friends)
            .send()
            .await?;
        anyhow::ensure!(resp.status().is_success(), "PUT friends: {}", resp.status());
        Ok(())
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SIGTERM lets the stack stop its function processes; kill_on_drop is the backstop.
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status();
        }
    }
}

/// Polls `probe` until it returns `Some`, or fails after `within`.
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, mut probe: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = probe().await? {
            return Ok(v);
        }
        if start.elapsed() > within {
            bail!("{what}: not reached within {within:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
