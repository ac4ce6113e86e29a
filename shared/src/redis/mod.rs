//! `RedisRankIndex`: the rank index in Redis, one sorted set and one hash per board, plus
//! a marker that says whether the index holds the board completely.
//!
//! Keys: `{prefix}lb:{<board>}:z` (sorted set, see [`crate::order`] for the encoding),
//! `:h` (hash: player -> `version|zscore|member`), `:m` (marker), `:tz`/`:th` (a
//! rebuild's keys) and `:tv` (the top-window version, moved on by every change inside
//! the first [`TOP_WINDOW`] places). All share the `{<board>}` hash tag, so a board lives in one Redis
//! Cluster slot and every script touches one slot only. See [`scripts`] for the scripts.
//!
//! Every call is one round trip bounded by the configured timeout. The connection is
//! opened on first use (not at cold start) and re-established by the connection manager
//! (one node) or the cluster client (which also follows `MOVED`/`ASK`). See [`conn`] for
//! how the topology, TLS and the auth token are chosen. Operations over several boards or
//! callers send one pipeline per cluster slot, concurrently, never assuming one node.
//! A circuit breaker stops a dead Redis from costing every request its full timeout:
//! after [`BREAKER_THRESHOLD`] consecutive connection failures or timeouts, calls fail at
//! once for [`BREAKER_COOLDOWN`], then one call probes again.

pub mod conn;
mod scripts;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicI64, AtomicU32, Ordering};
use std::time::Duration;

use futures::future::try_join_all;
use redis::{Pipeline, RedisResult, Script, ScriptInvocation};
use tokio::sync::OnceCell;
use tracing::{instrument, warn};

use crate::error::IndexError;
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::store::{
    Around, Health, IndexEntry, Placement, RankIndex, RateCounter, TOP_WINDOW, TopWindow,
};
use crate::time::now_ms;
pub use conn::{Access, Conn, SecretToken, Target, Topology};

/// Entries per call of the rebuild's bulk load script.
const LOAD_CHUNK: usize = 1_000;
/// Standings per call of the batched apply script (bounds one script's run time).
const APPLY_CHUNK: usize = 500;

/// Consecutive failures that open the breaker.
pub const BREAKER_THRESHOLD: u32 = 3;
/// How long an open breaker refuses calls.
pub const BREAKER_COOLDOWN: Duration = Duration::from_millis(1_000);
/// The first call's budget for reading the auth token and opening the connection.
const SECRET_AND_CONNECT: Duration = Duration::from_secs(5);

/// Counts consecutive failures and refuses calls while open.
#[derive(Default)]
struct Breaker {
    failures: AtomicU32,
    open_until_ms: AtomicI64,
}

impl Breaker {
    fn check(&self) -> Result<(), IndexError> {
        if now_ms() < self.open_until_ms.load(Ordering::Relaxed) {
            return Err(IndexError::CircuitOpen);
        }
        Ok(())
    }

    /// Counts an outage (timeout, refused or dropped connection) or resets on anything
    /// else: a Redis that answers, even with an error, is up.
    fn record(&self, outage: bool) {
        if !outage {
            self.failures.store(0, Ordering::Relaxed);
            return;
        }
        if self.failures.fetch_add(1, Ordering::Relaxed) + 1 >= BREAKER_THRESHOLD {
            self.failures.store(0, Ordering::Relaxed);
            let until = now_ms() + BREAKER_COOLDOWN.as_millis() as i64;
            self.open_until_ms.store(until, Ordering::Relaxed);
            warn!(
                cooldown_ms = BREAKER_COOLDOWN.as_millis() as u64,
                "Redis circuit breaker opened"
            );
        }
    }
}

/// The keys of one board.
struct BoardKeys {
    z: String,
    h: String,
    m: String,
    tz: String,
    th: String,
    tv: String,
}

/// The Redis adapter of [`RankIndex`].
pub struct RedisRankIndex {
    target: Target,
    access: Access,
    conn: OnceCell<Conn>,
    prefix: String,
    timeout: Duration,
    breaker: Breaker,
    apply: Script,
    apply_many: Script,
    load: Script,
    around: Script,
    page: Script,
    begin: Script,
    finish: Script,
    init: Script,
    top_window: Script,
    hit: Script,
}

fn health_of(state: &str) -> Health {
    match state {
        "ok" => Health::Ready,
        "rebuilding" => Health::Rebuilding,
        _ => Health::Missing,
    }
}

/// Reads may only use a board whose marker says it is complete.
fn ready(state: &str) -> Result<(), IndexError> {
    match health_of(state) {
        Health::Ready => Ok(()),
        other => Err(IndexError::NotReady(other)),
    }
}

/// Entries with their sorted-set scores, as ZRANGE WITHSCORES returns them.
type Flat = Vec<(String, f64)>;

/// A timeout, a refused or dropped connection: Redis is not there (as opposed to an
/// answer that is an error).
fn redis_outage(e: &redis::RedisError) -> bool {
    e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout()
}

impl IndexError {
    fn is_outage(&self) -> bool {
        match self {
            Self::Redis(e) => redis_outage(e),
            Self::Timeout(_) => true,
            _ => false,
        }
    }
}

fn reply_err(what: &str) -> IndexError {
    IndexError::Reply(what.to_owned())
}

fn decode_entries(dir: Direction, flat: Vec<(String, f64)>) -> Result<Vec<RankKey>, IndexError> {
    flat.into_iter()
        .map(|(member, z)| {
            RankKey::from_entry(dir, &member, z).ok_or_else(|| reply_err("undecodable member"))
        })
        .collect()
}

/// The four arguments every script takes per standing: player, version, zscore, member.
fn standing_args(inv: &mut ScriptInvocation<'_>, e: &IndexEntry) {
    inv.arg(&e.key.player)
        .arg(e.version)
        .arg(e.key.zscore(e.direction))
        .arg(e.key.member());
}

/// Parses a hash value `version|zscore|member` into its key.
fn decode_hash_value(dir: Direction, value: &str) -> Option<RankKey> {
    let mut parts = value.splitn(3, '|');
    let _version = parts.next()?;
    let zscore: f64 = parts.next()?.parse().ok()?;
    RankKey::from_entry(dir, parts.next()?, zscore)
}

impl RedisRankIndex {
    /// Parses the URL (one node or, by its `+cluster` scheme or several hosts, a
    /// cluster); connects lazily on first use. `prefix` is prepended to every key (tests
    /// use it to isolate themselves); `timeout` bounds every call.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> Result<Self, IndexError> {
        Self::with_target(
            Target::parse(url, None)?,
            Access::default(),
            prefix,
            timeout,
        )
    }

    /// An index over `target`, authenticating and trusting roots as `access` says.
    pub fn with_target(
        target: Target,
        access: Access,
        prefix: &str,
        timeout: Duration,
    ) -> Result<Self, IndexError> {
        Ok(Self {
            target,
            access,
            conn: OnceCell::new(),
            prefix: prefix.to_owned(),
            timeout,
            breaker: Breaker::default(),
            apply: Script::new(scripts::APPLY),
            apply_many: Script::new(scripts::APPLY_MANY),
            load: Script::new(scripts::LOAD),
            around: Script::new(scripts::AROUND),
            page: Script::new(scripts::PAGE),
            begin: Script::new(scripts::BEGIN),
            finish: Script::new(scripts::FINISH),
            init: Script::new(scripts::INIT),
            top_window: Script::new(scripts::TOP_WINDOW),
            hit: Script::new(scripts::HIT),
        })
    }

    /// The index `REDIS_URL`, `REDIS_MODE`, `REDIS_AUTH_SECRET_ARN`, `REDIS_TLS_CA_FILE`,
    /// `REDIS_KEY_PREFIX` and `REDIS_TIMEOUT_MS` describe. Reads the CA file if one is
    /// named; opens no connection and reads no secret yet.
    pub async fn from_config(
        config: &crate::config::Config,
    ) -> Result<Self, crate::error::InitError> {
        let mode = Topology::parse(config.redis_mode.as_deref())?;
        let target = Target::parse(config.require_redis_url()?, mode)?;
        let secret = match &config.redis_auth_secret {
            Some(id) => {
                let aws = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
                Some(SecretToken {
                    client: aws_sdk_secretsmanager::Client::new(&aws),
                    secret_id: id.clone(),
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
        Ok(Self::with_target(
            target,
            Access { secret, ca_pem },
            &config.redis_key_prefix,
            config.redis_timeout,
        )?)
    }

    /// One node or a cluster.
    pub fn topology(&self) -> Topology {
        self.target.topology
    }

    /// The live sorted-set and hash keys of a board.
    pub fn keys(&self, lb: &LeaderboardId) -> (String, String) {
        let k = self.board_keys(lb);
        (k.z, k.h)
    }

    /// The marker key of a board.
    pub fn marker_key(&self, lb: &LeaderboardId) -> String {
        self.board_keys(lb).m
    }

    fn board_keys(&self, lb: &LeaderboardId) -> BoardKeys {
        let base = format!("{}lb:{{{lb}}}", self.prefix);
        BoardKeys {
            z: format!("{base}:z"),
            h: format!("{base}:h"),
            m: format!("{base}:m"),
            tz: format!("{base}:tz"),
            th: format!("{base}:th"),
            tv: format!("{base}:tv"),
        }
    }

    /// The shared connection, opened by the first call (reading the auth token first if
    /// it is kept in Secrets Manager; that read has its own budget).
    async fn conn(&self) -> Result<Conn, IndexError> {
        self.breaker.check()?;
        let conn = self
            .conn
            .get_or_try_init(|| async {
                let connecting = conn::connect(&self.target, &self.access, self.timeout);
                match tokio::time::timeout(SECRET_AND_CONNECT, connecting).await {
                    Ok(Ok(c)) => Ok(c),
                    Ok(Err(e)) => {
                        self.breaker.record(e.is_outage());
                        Err(e)
                    }
                    Err(_) => {
                        self.breaker.record(true);
                        Err(IndexError::Timeout(SECRET_AND_CONNECT))
                    }
                }
            })
            .await?;
        Ok(conn.clone())
    }

    /// Runs `build`'s commands, one per item, and returns their replies in item order.
    /// Items are grouped by the cluster slot of their routing key, one pipeline per slot,
    /// sent concurrently (one pipeline in all on a single node). `script` is loaded and
    /// the pipeline re-run if a node forgot it.
    async fn per_slot<T: redis::FromRedisValue>(
        &self,
        routing: &[String],
        script: Option<&Script>,
        build: impl Fn(&mut Pipeline, usize),
    ) -> Result<Vec<T>, IndexError> {
        let groups = conn::group_by_slot(self.target.topology, routing.iter().map(String::as_str));
        let runs = groups.iter().map(|group| {
            let mut pipe = redis::pipe();
            for &i in group {
                build(&mut pipe, i);
            }
            async move {
                let replies: Vec<T> = match script {
                    Some(script) => self.pipeline_scripts(script, &pipe).await?,
                    None => {
                        let conn = self.conn().await?;
                        self.bounded(self.exchange(&conn, &pipe)).await?
                    }
                };
                Ok::<_, IndexError>(replies)
            }
        });
        let mut out: Vec<Option<T>> = std::iter::repeat_with(|| None)
            .take(routing.len())
            .collect();
        for (group, replies) in groups.iter().zip(try_join_all(runs).await?) {
            if replies.len() != group.len() {
                return Err(reply_err("pipeline reply count"));
            }
            for (&i, reply) in group.iter().zip(replies) {
                out[i] = Some(reply);
            }
        }
        out.into_iter()
            .map(|r| r.ok_or_else(|| reply_err("pipeline reply missing")))
            .collect()
    }

    /// Sends a pipeline's commands and reads their replies as one pipeline's. On one node
    /// that is one pipeline. In a cluster each command goes on its own, all at once (the
    /// cluster connection still writes a node's commands back to back): a pipeline cannot
    /// follow `ASK` or `TRYAGAIN` while a slot moves, a single command can.
    async fn exchange<T: redis::FromRedisValue>(
        &self,
        conn: &Conn,
        pipe: &Pipeline,
    ) -> RedisResult<T> {
        match conn {
            Conn::Single(_) => pipe.query_async(&mut conn.clone()).await,
            Conn::Cluster(_) => {
                let replies = try_join_all(pipe.cmd_iter().map(|cmd| {
                    let mut conn = conn.clone();
                    async move { cmd.query_async::<redis::Value>(&mut conn).await }
                }))
                .await?;
                Ok(redis::from_redis_value(redis::Value::Array(replies))?)
            }
        }
    }

    /// Runs one exchange within the timeout and through the breaker, keeping Redis' own
    /// error (so callers can react to NOSCRIPT).
    async fn within<T>(
        &self,
        fut: impl Future<Output = RedisResult<T>>,
    ) -> Result<RedisResult<T>, IndexError> {
        self.breaker.check()?;
        let res = tokio::time::timeout(self.timeout, fut).await;
        let outage = match &res {
            Err(_) => true,
            Ok(Err(e)) => redis_outage(e),
            Ok(Ok(_)) => false,
        };
        self.breaker.record(outage);
        res.map_err(|_| IndexError::Timeout(self.timeout))
    }

    /// Runs one exchange within the timeout and through the breaker.
    async fn bounded<T>(&self, fut: impl Future<Output = RedisResult<T>>) -> Result<T, IndexError> {
        Ok(self.within(fut).await??)
    }

    /// A script invocation, through the breaker and the timeout.
    async fn invoke<T: redis::FromRedisValue>(
        &self,
        inv: &ScriptInvocation<'_>,
    ) -> Result<T, IndexError> {
        let mut conn = self.conn().await?;
        self.bounded(inv.invoke_async(&mut conn)).await
    }

    /// A pipeline of script invocations; a server that forgot the script (restart,
    /// flush) gets it loaded and the pipeline run again, which is harmless because every
    /// script here is version-checked or idempotent.
    async fn pipeline_scripts<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        pipe: &redis::Pipeline,
    ) -> Result<T, IndexError> {
        let mut conn = self.conn().await?;
        match self.within(self.exchange(&conn, pipe)).await? {
            Ok(r) => Ok(r),
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                self.bounded(script.load_async(&mut conn)).await?;
                self.bounded(self.exchange(&conn, pipe)).await
            }
            Err(e) => Err(e.into()),
        }
    }

    fn apply_invocation<'a>(&'a self, entry: &IndexEntry, want_rank: bool) -> ScriptInvocation<'a> {
        let k = self.board_keys(&entry.board);
        let mut inv = self.apply.prepare_invoke();
        inv.key(k.z).key(k.h).key(k.m).key(k.tz).key(k.th).key(k.tv);
        standing_args(&mut inv, entry);
        inv.arg(if want_rank { "1" } else { "0" })
            .arg(entry.expire_at.unwrap_or(0))
            .arg(TOP_WINDOW);
        inv
    }
}

impl RankIndex for RedisRankIndex {
    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let inv = self.apply_invocation(entry, true);
        let (applied, state, rank, total): (u8, String, u64, u64) = self.invoke(&inv).await?;
        Ok(Placement {
            applied: applied == 1,
            rank: rank + 1,
            total,
            health: health_of(&state),
        })
    }

    #[instrument(skip_all, fields(count = entries.len()))]
    async fn apply_many(&self, entries: &[IndexEntry]) -> Result<Vec<bool>, IndexError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        // One script call per board and chunk (in stream order within it); the calls go
        // in one pipeline per slot.
        let mut slot_of: HashMap<&LeaderboardId, usize> = HashMap::new();
        let mut by_board: Vec<(&LeaderboardId, Vec<usize>)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            let slot = *slot_of.entry(&e.board).or_insert_with(|| {
                by_board.push((&e.board, Vec::new()));
                by_board.len() - 1
            });
            by_board[slot].1.push(i);
        }
        let calls: Vec<(BoardKeys, &[usize])> = by_board
            .iter()
            .flat_map(|(board, idx)| {
                idx.chunks(APPLY_CHUNK)
                    .map(|chunk| (self.board_keys(board), chunk))
            })
            .collect();
        let routing: Vec<String> = calls.iter().map(|(k, _)| k.z.clone()).collect();
        let replies: Vec<Vec<u8>> = self
            .per_slot(&routing, Some(&self.apply_many), |pipe, c| {
                let (k, chunk) = &calls[c];
                let expire_at = chunk.iter().filter_map(|&i| entries[i].expire_at).max();
                let mut inv = self.apply_many.prepare_invoke();
                inv.key(&k.z)
                    .key(&k.h)
                    .key(&k.m)
                    .key(&k.tz)
                    .key(&k.th)
                    .key(&k.tv);
                inv.arg(TOP_WINDOW).arg(expire_at.unwrap_or(0));
                for &i in chunk.iter() {
                    standing_args(&mut inv, &entries[i]);
                }
                pipe.invoke_script(&inv);
            })
            .await?;
        let mut applied = vec![false; entries.len()];
        for ((_, chunk), flags) in calls.iter().zip(replies) {
            if flags.len() != chunk.len() {
                return Err(reply_err("apply flags count"));
            }
            for (&i, a) in chunk.iter().zip(flags) {
                applied[i] = a == 1;
            }
        }
        Ok(applied)
    }

    #[instrument(skip(self))]
    async fn around(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        player: &PlayerId,
        k: u64,
    ) -> Result<Option<Around>, IndexError> {
        let keys = self.board_keys(lb);
        let mut inv = self.around.prepare_invoke();
        inv.key(&keys.z)
            .key(&keys.h)
            .key(&keys.m)
            .arg(player.as_str())
            .arg(k);
        let (state, rank, total, lo, flat): (String, i64, u64, u64, Vec<(String, f64)>) =
            self.invoke(&inv).await?;
        ready(&state)?;
        if rank < 0 {
            return Ok(None);
        }
        Ok(Some(Around {
            rank: rank as u64 + 1,
            total,
            first_rank: lo + 1,
            entries: decode_entries(dir, flat)?,
        }))
    }

    #[instrument(skip(self))]
    async fn top(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64), IndexError> {
        let conn = self.conn().await?;
        let k = self.board_keys(lb);
        let last = n.saturating_sub(1) as isize;
        let mut pipe = redis::pipe();
        pipe.hget(&k.m, "state")
            .zrange_withscores(&k.z, 0, last)
            .zcard(&k.z);
        let (state, flat, total): (Option<String>, Vec<(String, f64)>, u64) =
            self.bounded(self.exchange(&conn, &pipe)).await?;
        ready(state.as_deref().unwrap_or_default())?;
        Ok((decode_entries(dir, flat)?, total))
    }

    #[instrument(skip(self))]
    async fn page(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        after: Option<&RankKey>,
        limit: u64,
    ) -> Result<(u64, Vec<RankKey>, u64), IndexError> {
        let keys = self.board_keys(lb);
        let mut inv = self.page.prepare_invoke();
        inv.key(&keys.z).key(&keys.m);
        match after {
            Some(k) => inv.arg("1").arg(k.zscore(dir)).arg(k.member()),
            None => inv.arg("0").arg(0).arg(""),
        };
        inv.arg(limit);
        let (state, pos, total, flat): (String, u64, u64, Vec<(String, f64)>) =
            self.invoke(&inv).await?;
        ready(&state)?;
        Ok((pos, decode_entries(dir, flat)?, total))
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, IndexError> {
        let conn = self.conn().await?;
        let k = self.board_keys(lb);
        let names: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
        let mut pipe = redis::pipe();
        pipe.hget(&k.m, "state");
        if !names.is_empty() {
            pipe.cmd("HMGET").arg(&k.h).arg(&names);
        }
        let (state, values): (Option<String>, Option<Vec<Option<String>>>) = if names.is_empty() {
            let (state,): (Option<String>,) = self.bounded(self.exchange(&conn, &pipe)).await?;
            (state, None)
        } else {
            self.bounded(self.exchange(&conn, &pipe)).await?
        };
        ready(state.as_deref().unwrap_or_default())?;
        values
            .unwrap_or_default()
            .into_iter()
            .map(|v| match v {
                None => Ok(None),
                Some(v) => decode_hash_value(dir, &v)
                    .map(Some)
                    .ok_or_else(|| reply_err("undecodable hash value")),
            })
            .collect()
    }

    #[instrument(skip(self))]
    async fn init_board(
        &self,
        lb: &LeaderboardId,
        expire_at: Option<i64>,
    ) -> Result<(), IndexError> {
        let mut inv = self.init.prepare_invoke();
        inv.key(self.marker_key(lb)).arg(expire_at.unwrap_or(0));
        let _set: u8 = self.invoke(&inv).await?;
        Ok(())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn health(&self, boards: &[LeaderboardId]) -> Result<Vec<Health>, IndexError> {
        if boards.is_empty() {
            return Ok(Vec::new());
        }
        let markers: Vec<String> = boards.iter().map(|lb| self.marker_key(lb)).collect();
        let states: Vec<Option<String>> = self
            .per_slot(&markers, None, |pipe, i| {
                pipe.hget(&markers[i], "state");
            })
            .await?;
        Ok(states
            .iter()
            .map(|s| health_of(s.as_deref().unwrap_or_default()))
            .collect())
    }

    #[instrument(skip(self))]
    async fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        fresh: bool,
    ) -> Result<bool, IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.begin.prepare_invoke();
        inv.key(&k.m)
            .key(&k.tz)
            .key(&k.th)
            .arg(gen_id)
            .arg(if fresh { "1" } else { "0" });
        let resumed: u8 = self.invoke(&inv).await?;
        Ok(resumed == 1)
    }

    #[instrument(skip(self, entries), fields(count = entries.len()))]
    async fn load(&self, lb: &LeaderboardId, entries: &[IndexEntry]) -> Result<(), IndexError> {
        // The script takes distinct players; of repeats, the newest version wins anyway.
        let mut newest: HashMap<&str, &IndexEntry> = HashMap::with_capacity(entries.len());
        for e in entries {
            let slot = newest.entry(e.key.player.as_str()).or_insert(e);
            if e.version > slot.version {
                *slot = e;
            }
        }
        if newest.is_empty() {
            return Ok(());
        }
        let k = self.board_keys(lb);
        let mut pipe = redis::pipe();
        let batch: Vec<&IndexEntry> = newest.into_values().collect();
        for chunk in batch.chunks(LOAD_CHUNK) {
            let mut inv = self.load.prepare_invoke();
            inv.key(&k.tz).key(&k.th);
            for e in chunk {
                standing_args(&mut inv, e);
            }
            pipe.invoke_script(&inv);
        }
        let _loaded: Vec<redis::Value> = self.pipeline_scripts(&self.load, &pipe).await?;
        Ok(())
    }

    #[instrument(skip(self))]
    async fn finish_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        expire_at: Option<i64>,
    ) -> Result<bool, IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.finish.prepare_invoke();
        inv.key(&k.z)
            .key(&k.h)
            .key(&k.m)
            .key(&k.tz)
            .key(&k.th)
            .key(&k.tv)
            .arg(gen_id)
            .arg(expire_at.unwrap_or(0));
        let swapped: u8 = self.invoke(&inv).await?;
        Ok(swapped == 1)
    }

    #[instrument(skip(self))]
    async fn top_window(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        known: Option<&str>,
    ) -> Result<TopWindow, IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.top_window.prepare_invoke();
        inv.key(&k.z)
            .key(&k.m)
            .key(&k.tv)
            .arg(known.unwrap_or_default())
            .arg(TOP_WINDOW);
        let (state, version, total, flat): (String, String, u64, Option<Flat>) =
            self.invoke(&inv).await?;
        ready(&state)?;
        Ok(TopWindow {
            version,
            total,
            entries: flat.map(|f| decode_entries(dir, f)).transpose()?,
        })
    }
}

impl RateCounter for RedisRankIndex {
    #[instrument(skip(self))]
    async fn hit(&self, keys: &[String], window: Duration) -> Result<Vec<(u64, u64)>, IndexError> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let counters: Vec<String> = keys
            .iter()
            .map(|k| format!("{}rl:{k}", self.prefix))
            .collect();
        let replies: Vec<(u64, i64)> = self
            .per_slot(&counters, Some(&self.hit), |pipe, i| {
                let mut inv = self.hit.prepare_invoke();
                inv.key(&counters[i]).arg(window.as_millis() as u64);
                pipe.invoke_script(&inv);
            })
            .await?;
        Ok(replies
            .into_iter()
            .map(|(n, ttl)| (n, ttl.max(0) as u64))
            .collect())
    }
}
