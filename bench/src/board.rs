//! The benchmark board: generated players, the service context over them, and the load
//! into Redis through the rebuild path (the measured rebuild load rate) and as bare ZADDs.

use leaderboard_core::store::BoardStore;
use leaderboard_core::store::IndexUpkeep;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use leaderboard::adapters::dynamodb::DynamoScoreStore;
use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::{Context, Settings};
use leaderboard_core::store::{IndexEntry, RebuildStart};
use leaderboard_rules::board::{Board, BoardStatus, Policy};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{Direction, RankKey};
use leaderboard_rules::score::Score;
use redis::aio::ConnectionManager;
use serde::Serialize;

use crate::stats::bar;

/// A small deterministic generator (xorshift64*), so every run loads the same board.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A plain connection for the bare twins and the server's statistics, with no response
/// timeout: some of what it sends (COPY or UNLINK of a million-member set) takes longer
/// than the client's default 500 ms.
pub async fn bare_connection(redis_url: &str) -> anyhow::Result<ConnectionManager> {
    let config = redis::aio::ConnectionManagerConfig::new().set_response_timeout(None);
    Ok(redis::Client::open(redis_url)?
        .get_connection_manager_with_config(config)
        .await?)
}

/// One generated player.
pub struct Player {
    pub id: String,
    pub score: i64,
    pub reached_at: i64,
}

impl Player {
    pub fn key(&self) -> RankKey {
        RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: Score::new("score", self.score).expect("generated scores are in range"),
            reached_at: self.reached_at,
            player: self.id.clone(),
        }
    }

    pub fn member(&self) -> String {
        self.key().member()
    }
}

/// `n` players with scores 0..10M (many ties) reached over the last 30 days.
pub fn players(n: u64) -> Vec<Player> {
    let mut rng = Rng::new(42);
    let base = chrono::Utc::now().timestamp_millis() - 30 * 86_400_000;
    (0..n)
        .map(|i| Player {
            id: format!("p{i:08}"),
            score: rng.below(10_000_000) as i64,
            reached_at: base + rng.below(30 * 86_400_000) as i64,
        })
        .collect()
}

pub fn entry(lb: &LeaderboardId, p: &Player, version: u64) -> IndexEntry {
    IndexEntry {
        metadata: None,
        board: lb.clone(),
        direction: Direction::Desc,
        key: p.key(),
        version,
        expire_at: None,
        kind: leaderboard_core::store::EntryKind::Standing,
    }
}

/// The DynamoDB adapter over `table` at the endpoint `dynamodb_url`.
pub async fn store(dynamodb_url: &str, table: &str) -> DynamoScoreStore {
    let aws = leaderboard::wiring::aws_defaults()
        .endpoint_url(dynamodb_url)
        .region(aws_config::Region::new("us-east-1"))
        .credentials_provider(aws_sdk_dynamodb::config::Credentials::new(
            "bench", "bench", None, None, "bench",
        ))
        .load()
        .await;
    DynamoScoreStore::new(aws_sdk_dynamodb::Client::new(&aws), table)
}

/// The service context the benchmark reads through: the real adapters, the reply
/// cache off (every read reaches Redis) and board definitions trusted for an hour (so
/// DynamoDB is out of the measured loop).
pub async fn context(
    redis_url: &str,
    dynamodb_url: &str,
    table: &str,
) -> anyhow::Result<AppContext> {
    let store = store(dynamodb_url, table).await;
    let index = RedisRankIndex::new(redis_url, "bench:", Duration::from_secs(5))?;
    let settings = Settings {
        board_cache_ttl: Duration::from_secs(3600),
        read_cache_ttl: Duration::ZERO,
        ..Settings::default()
    };
    Ok(Context::new(store, index, settings))
}

/// Creates the table and the board definition (BEST) in DynamoDB.
pub async fn create_board(ctx: &AppContext, lb: &LeaderboardId) -> anyhow::Result<()> {
    ctx.store
        .create_table()
        .await
        .context("create the benchmark table")?;
    put_board(ctx, lb, Policy::Best).await
}

/// Stores an ACTIVE board definition with dense ranks (the table exists).
pub async fn put_board(ctx: &AppContext, lb: &LeaderboardId, policy: Policy) -> anyhow::Result<()> {
    let board = Board {
        tournament: None,
        leaderboard_id: lb.clone(),
        policy,
        status: BoardStatus::Active,
        created_at: chrono::Utc::now().timestamp_millis(),
        window: None,
        sealed_at: None,
        dense_ranks: true,
        rank_index: true,
        scores: Default::default(),
        integrity: None,
        reset: None,
        rewards: None,
    };
    ctx.store.create_board(&board).await?;
    Ok(())
}

/// How fast a board loads into Redis.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LoadRate {
    pub players: u64,
    pub seconds: f64,
    pub players_per_s: f64,
    /// Of `seconds`, the Redis server's own time (its command stats), when measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redis_seconds: Option<f64>,
}

impl LoadRate {
    fn new(players: u64, took: Duration) -> Self {
        Self {
            players,
            seconds: took.as_secs_f64(),
            players_per_s: players as f64 / took.as_secs_f64(),
            redis_seconds: None,
        }
    }
}

/// Loads every player through the rebuild's index calls (begin, one version-checked
/// load per page of 1,000 as the rebuild reads them from DynamoDB, the swap), timing
/// only the Redis side; the board keeps dense ranks or not.
pub async fn load_by_rebuild(
    redis_url: &str,
    ctx: &AppContext,
    lb: &LeaderboardId,
    players: &[Player],
    dense_ranks: bool,
) -> anyhow::Result<LoadRate> {
    let pages: Vec<Vec<IndexEntry>> = players
        .chunks(1_000)
        .map(|page| page.iter().map(|p| entry(lb, p, 1)).collect())
        .collect();
    let mut stats = bare_connection(redis_url).await?;
    crate::projector::reset_server_stats(&mut stats).await?;
    let label = match dense_ranks {
        true => "rebuild load (ours)",
        false => "rebuild load (no dense ranks)",
    };
    let bar = bar(players.len() as u64, label);
    let start = Instant::now();
    ctx.index
        .begin_rebuild(
            lb,
            "bench",
            RebuildStart {
                fresh: true,
                dense_ranks,
            },
        )
        .await?;
    for page in &pages {
        ctx.index.load(lb, page).await?;
        bar.inc(page.len() as u64);
    }
    anyhow::ensure!(
        ctx.index.finish_rebuild(lb, "bench", None).await?,
        "the rebuild did not swap in"
    );
    let took = start.elapsed();
    bar.finish_and_clear();
    let mut rate = LoadRate::new(players.len() as u64, took);
    rate.redis_seconds = Some(crate::projector::server_usec(&mut stats, "evalsha").await? / 1e6);
    println!(
        "{:>28}: {} players in {:.2} s = {:.0} players/s ({:.2} s in Redis)",
        label,
        rate.players,
        rate.seconds,
        rate.players_per_s,
        rate.redis_seconds.unwrap_or_default()
    );
    Ok(rate)
}

/// The key the floor loads into, kept for the projector's bare twin.
pub const BARE_LOAD_KEY: &str = "bench:bare-load";
/// The bare floor's hash of player -> version and member, as an exact index keeps one.
pub const BARE_HASH_KEY: &str = "bench:bare-load:h";

/// The floor: the same players as plain `ZADD`s of 1,000 members each into a scratch
/// key (no hash, no version check), in the order the rebuild loaded the board. The key
/// stays for the projector's bare twin; the caller drops it.
pub async fn load_bare(
    conn: &mut ConnectionManager,
    players: &[Player],
) -> anyhow::Result<LoadRate> {
    let key = BARE_LOAD_KEY;
    crate::projector::reset_server_stats(conn).await?;
    let label = "ZADD + HSET (bare)";
    let bar = bar(players.len() as u64, label);
    let start = Instant::now();
    // What an exact index needs per player loaded: the sorted set's member and the
    // hash's entry (version and member), a page of 1,000 in one round trip.
    for page in players.chunks(1_000) {
        let mut zadd = redis::cmd("ZADD");
        zadd.arg(key);
        let mut hset = redis::cmd("HSET");
        hset.arg(BARE_HASH_KEY);
        for p in page {
            zadd.arg(-p.score).arg(p.member());
            hset.arg(&p.id).arg(format!("1:{}", p.member()));
        }
        let _: (u64, u64) = redis::pipe()
            .add_command(zadd)
            .add_command(hset)
            .query_async(conn)
            .await?;
        bar.inc(page.len() as u64);
    }
    let took = start.elapsed();
    bar.finish_and_clear();
    let mut rate = LoadRate::new(players.len() as u64, took);
    let usec = crate::projector::server_usec(conn, "zadd").await?
        + crate::projector::server_usec(conn, "hset").await?;
    rate.redis_seconds = Some(usec / 1e6);
    println!(
        "{:>28}: {} players in {:.2} s = {:.0} players/s",
        label, rate.players, rate.seconds, rate.players_per_s
    );
    Ok(rate)
}

pub fn player_id(p: &Player) -> PlayerId {
    PlayerId::parse(&p.id).expect("generated ids are valid")
}
