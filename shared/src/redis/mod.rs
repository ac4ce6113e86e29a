//! `RedisRankIndex`: the rank index in Redis, one sorted set and one hash per board, plus
//! a marker that says whether the index holds the board completely and on which
//! replication history it was built.
//!
//! Modules: [`conn`] (topology, TLS, auth token), `link` (the connection, opened on
//! first use with bounded waits), `breaker` (the circuit breaker), `keys` (key names),
//! `scripts` (the Lua scripts, in `lua/`).
//!
//! ## Integrity
//! Every script first checks the board's marker (`checked` in `lua/prelude.lua`): the
//! marker names the replication id (`master_replid`) of the node the index was built
//! on, and its size must equal both the sorted set's and the hash's. A restart (even
//! from the node's own snapshot), a promoted replica, a board whose keys moved to or
//! were split across nodes: each shows as a mismatch, and the script turns the marker
//! `stale` before answering. Reads of a board that is not `ok` fail with
//! [`IndexError::NotReady`] and are answered from DynamoDB instead; the use cases report
//! the board for repair, and a rebuild makes it `ok` again on the current history.
//!
//! ## Waits
//! Every call is one round trip bounded by the configured timeout, through a circuit
//! breaker. Opening the connection is shared by all callers and waited on at most
//! [`CONNECT_WAIT`] (or the call timeout if longer); a connection that cannot be opened
//! in that time opens the breaker at once. Operations over several boards or callers
//! send one pipeline per cluster slot, concurrently, never assuming one node.

mod breaker;
pub mod conn;
mod keys;
mod link;
mod scripts;

use std::collections::HashMap;
use std::future::Future;
use std::time::Duration;

use futures::future::try_join_all;
use redis::{Pipeline, RedisResult, Script, ScriptInvocation};
use tracing::instrument;

use crate::error::IndexError;
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::store::{
    Around, BatchApplied, Health, IndexEntry, Placement, REPAIR_CLAIM, RankIndex, RankSketch,
    RateCounter, TOP_WINDOW, TopWindow,
};
pub use breaker::{COOLDOWN as BREAKER_COOLDOWN, THRESHOLD as BREAKER_THRESHOLD};
pub use conn::{Access, Conn, SecretToken, Target, Topology};
use keys::BoardKeys;
use link::Link;
use scripts::Scripts;

/// Entries per call of the rebuild's bulk load script.
const LOAD_CHUNK: usize = 1_000;
/// Standings per call of the batched apply script (bounds one script's run time).
const APPLY_CHUNK: usize = 500;
/// How long a call waits for the connection to open (when that is longer than the call
/// timeout): enough for TCP, TLS and AUTH on a cold container, short enough that a
/// silent Redis costs a request well under a second.
pub const CONNECT_WAIT: Duration = Duration::from_millis(250);
/// One attempt to open the connection, when not configured.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The Redis adapter of [`RankIndex`].
pub struct RedisRankIndex {
    link: Link,
    prefix: String,
    timeout: Duration,
    breaker: breaker::Breaker,
    scripts: Scripts,
}

fn health_of(state: &str) -> Health {
    match state {
        "ok" => Health::Ready,
        "rebuilding" => Health::Rebuilding,
        "stale" => Health::Stale,
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

fn reply_err(what: &str) -> IndexError {
    IndexError::Reply(what.to_owned())
}

fn decode_entries(dir: Direction, flat: Flat) -> Result<Vec<RankKey>, IndexError> {
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

/// Rounds of settling one call may go through before it gives up.
const MAX_SETTLES: usize = 16;

/// The boards an error's `INDEXMOVED` replies name (a board whose marker names another
/// replication history than its node's, as `prelude.lua` raises it), as (key base,
/// that history): one for a script, any number for a pipeline.
fn moved_boards(err: &redis::RedisError) -> Vec<(String, String)> {
    let Some(errors) = err.clone().into_server_errors() else {
        return Vec::new();
    };
    errors
        .iter()
        .filter(|(_, e)| e.code() == "INDEXMOVED")
        .filter_map(|(_, e)| {
            let mut words = e.details()?.split_whitespace();
            Some((words.next()?.to_owned(), words.next()?.to_owned()))
        })
        .collect()
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
            CONNECT_TIMEOUT,
        )
    }

    /// An index over `target`, authenticating and trusting roots as `access` says.
    pub fn with_target(
        target: Target,
        access: Access,
        prefix: &str,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Self, IndexError> {
        Ok(Self {
            link: Link::new(target, access, timeout, connect_timeout),
            prefix: prefix.to_owned(),
            timeout,
            breaker: breaker::Breaker::default(),
            scripts: Scripts::new(),
        })
    }

    /// The index `REDIS_URL`, `REDIS_MODE`, `REDIS_AUTH_SECRET_ARN`, `REDIS_TLS_CA_FILE`,
    /// `REDIS_KEY_PREFIX`, `REDIS_TIMEOUT_MS` and `REDIS_CONNECT_TIMEOUT_MS` describe.
    /// Reads the CA file if one is named; opens no connection and reads no secret yet.
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
            config.redis_connect_timeout,
        )?)
    }

    /// One node or a cluster.
    pub fn topology(&self) -> Topology {
        self.link.topology()
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
        BoardKeys::new(&self.prefix, lb)
    }

    /// The shared connection, through the breaker; a connection that cannot be opened in
    /// time opens the breaker.
    async fn conn(&self) -> Result<Conn, IndexError> {
        self.breaker.check()?;
        let wait = self.timeout.max(CONNECT_WAIT);
        self.link.get(wait).await.inspect_err(|e| {
            if e.is_outage() {
                let why = crate::http::error_chain(e);
                self.breaker.trip(&format!("no connection: {why}"));
            }
        })
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
        let groups = conn::group_by_slot(self.topology(), routing.iter().map(String::as_str));
        let runs = groups.iter().map(|group| {
            let mut pipe = redis::pipe();
            for &i in group {
                build(&mut pipe, i);
            }
            async move {
                let replies: Vec<T> = self
                    .call(script, |conn| {
                        let pipe = &pipe;
                        async move { self.exchange(&conn, pipe).await }
                    })
                    .await?;
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
        // A connection found dropped (reset, closed under us) does not count: the client
        // reconnects at once and the next try tells whether Redis is there. Counting it
        // would let a failure count left from an outage open the breaker on the first
        // call after Redis is back, refusing the very retry that would succeed.
        let outage = match &res {
            Err(_) => true,
            Ok(Err(e)) => {
                e.is_connection_refusal()
                    || (IndexError::redis_outage(e) && !e.is_connection_dropped())
            }
            Ok(Ok(_)) => false,
        };
        self.breaker.record(outage);
        res.map_err(|_| IndexError::Timeout(self.timeout))
    }

    /// Runs one exchange within the timeout and through the breaker.
    async fn bounded<T>(&self, fut: impl Future<Output = RedisResult<T>>) -> Result<T, IndexError> {
        Ok(self.within(fut).await??)
    }

    /// One call on the shared connection, within the timeout and through the breaker.
    /// It runs again, within its own budget each time:
    /// - once, when the connection turned out to be dropped (a restart, a failover, a cut
    ///   connection): the client reconnects on such an error, so the next try goes out on
    ///   a new connection instead of failing a whole request (or stream batch) per
    ///   container;
    /// - when a node forgot `script` (restart, flush): it is loaded first;
    /// - per board a script found on another replication history, once that is settled
    ///   (see [`Self::settle`]); a script that finds one stops before changing anything.
    ///
    /// Every call here may run twice: applies are version-checked, the rest idempotent.
    async fn call<T, F, Fut>(&self, script: Option<&Script>, exchange: F) -> Result<T, IndexError>
    where
        F: Fn(Conn) -> Fut,
        Fut: Future<Output = RedisResult<T>>,
    {
        let (mut redialed, mut reloads, mut settles) = (false, 0, 0);
        loop {
            let conn = self.conn().await?;
            match self.within(exchange(conn.clone())).await? {
                Ok(v) => return Ok(v),
                Err(e) if e.is_connection_dropped() && !redialed => redialed = true,
                Err(e)
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript)
                        && reloads < 2 =>
                {
                    if let Some(script) = script {
                        self.bounded(script.load_async(&mut conn.clone())).await?;
                    }
                    reloads += 1;
                }
                Err(e) if settles < MAX_SETTLES && !moved_boards(&e).is_empty() => {
                    self.settle(&moved_boards(&e)).await?;
                    settles += 1;
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// A script invocation (see [`Self::call`]).
    async fn invoke<T: redis::FromRedisValue>(
        &self,
        inv: &ScriptInvocation<'_>,
    ) -> Result<T, IndexError> {
        self.call(
            None,
            |mut conn| async move { inv.invoke_async(&mut conn).await },
        )
        .await
    }

    /// A plain command (see [`Self::call`]).
    async fn command<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> Result<T, IndexError> {
        self.call(
            None,
            |mut conn| async move { cmd.query_async(&mut conn).await },
        )
        .await
    }

    /// A pipeline of invocations of `script` (see [`Self::call`]).
    async fn pipeline_scripts<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        pipe: &redis::Pipeline,
    ) -> Result<T, IndexError> {
        self.call(Some(script), |conn| async move {
            self.exchange(&conn, pipe).await
        })
        .await
    }

    /// Settles the boards `INDEXMOVED` errors named, as (key base, replication id): each
    /// marker names another history than its node's. Where that history is still a live
    /// master's (the board's keys were migrated here intact), the board is adopted here;
    /// otherwise (this node restarted, or is a promoted replica) it turns stale. See
    /// `settle.lua`.
    async fn settle(&self, boards: &[(String, String)]) -> Result<(), IndexError> {
        let live = self.live_histories().await?;
        for (base, from) in boards {
            let adopt = live.iter().any(|h| h == from);
            let mut inv = self.scripts.settle.prepare_invoke();
            inv.key(format!("{base}:z"))
                .key(format!("{base}:h"))
                .key(format!("{base}:m"))
                .arg(from)
                .arg(if adopt { "1" } else { "0" });
            let mut conn = self.conn().await?;
            let state: String = self.bounded(inv.invoke_async(&mut conn)).await?;
            tracing::warn!(keys = %base, from = %from, live = adopt, state, "rank index found on another replication history; settled");
        }
        Ok(())
    }

    /// The replication ids of the masters that serve the cluster now (each in a healthy
    /// cluster state). A single node has no other history a board could move from.
    async fn live_histories(&self) -> Result<Vec<String>, IndexError> {
        let Conn::Cluster(cluster) = self.conn().await? else {
            return Ok(Vec::new());
        };
        let masters = || {
            redis::cluster_routing::RoutingInfo::MultiNode((
                redis::cluster_routing::MultipleNodeRoutingInfo::AllMasters,
                None,
            ))
        };
        let mut info = redis::cmd("INFO");
        info.arg("replication");
        let mut state = redis::cmd("CLUSTER");
        state.arg("INFO");
        let (mut a, mut b) = (cluster.clone(), cluster);
        let (infos, states) = futures::try_join!(
            self.bounded(a.route_command(info, masters())),
            self.bounded(b.route_command(state, masters())),
        )?;
        let by_node = |v: redis::Value| -> HashMap<String, String> {
            let redis::Value::Map(pairs) = v else {
                return HashMap::new();
            };
            pairs
                .into_iter()
                .filter_map(|(k, v)| {
                    Some((
                        redis::from_redis_value::<String>(k).ok()?,
                        redis::from_redis_value::<String>(v).ok()?,
                    ))
                })
                .collect()
        };
        let healthy = by_node(states);
        Ok(by_node(infos)
            .into_iter()
            .filter(|(node, _)| {
                healthy
                    .get(node)
                    .is_some_and(|s| s.contains("cluster_state:ok"))
            })
            .filter_map(|(_, text)| {
                text.lines()
                    .find_map(|l| l.trim().strip_prefix("master_replid:"))
                    .map(str::to_owned)
            })
            .collect())
    }

    /// A script over a board's sorted set, hash and marker (the reads' keys, in that
    /// order), with `args`.
    fn board_read<'a>(&self, script: &'a Script, lb: &LeaderboardId) -> ScriptInvocation<'a> {
        let k = self.board_keys(lb);
        let mut inv = script.prepare_invoke();
        inv.key(k.z).key(k.h).key(k.m);
        inv
    }

    /// A script over every live and rebuild key of a board (the applies' and the
    /// rebuild swap's keys: z, h, m, tz, th, tv).
    fn board_write<'a>(&self, script: &'a Script, k: &BoardKeys) -> ScriptInvocation<'a> {
        let mut inv = script.prepare_invoke();
        inv.key(&k.z)
            .key(&k.h)
            .key(&k.m)
            .key(&k.tz)
            .key(&k.th)
            .key(&k.tv);
        inv
    }
}

impl RankIndex for RedisRankIndex {
    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let k = self.board_keys(&entry.board);
        let mut inv = self.board_write(&self.scripts.apply, &k);
        standing_args(&mut inv, entry);
        inv.arg("1")
            .arg(entry.expire_at.unwrap_or(0))
            .arg(TOP_WINDOW);
        let (applied, state, rank, total): (u8, String, u64, u64) = self.invoke(&inv).await?;
        Ok(Placement {
            applied: applied == 1,
            rank: rank + 1,
            total,
            health: health_of(&state),
        })
    }

    #[instrument(skip_all, fields(count = entries.len()))]
    async fn apply_many(&self, entries: &[IndexEntry]) -> Result<BatchApplied, IndexError> {
        if entries.is_empty() {
            return Ok(BatchApplied::default());
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
        let calls: Vec<(&LeaderboardId, BoardKeys, &[usize])> = by_board
            .iter()
            .flat_map(|(board, idx)| {
                idx.chunks(APPLY_CHUNK)
                    .map(|chunk| (*board, self.board_keys(board), chunk))
            })
            .collect();
        let routing: Vec<String> = calls.iter().map(|(_, k, _)| k.z.clone()).collect();
        let replies: Vec<(String, Vec<u8>)> = self
            .per_slot(&routing, Some(&self.scripts.apply_many), |pipe, c| {
                let (_, k, chunk) = &calls[c];
                let expire_at = chunk.iter().filter_map(|&i| entries[i].expire_at).max();
                let mut inv = self.board_write(&self.scripts.apply_many, k);
                inv.arg(TOP_WINDOW).arg(expire_at.unwrap_or(0));
                for &i in chunk.iter() {
                    standing_args(&mut inv, &entries[i]);
                }
                pipe.invoke_script(&inv);
            })
            .await?;
        let mut out = BatchApplied {
            applied: vec![false; entries.len()],
            unready: Vec::new(),
        };
        for ((board, _, chunk), (state, flags)) in calls.iter().zip(replies) {
            if flags.len() != chunk.len() {
                return Err(reply_err("apply flags count"));
            }
            for (&i, a) in chunk.iter().zip(flags) {
                out.applied[i] = a == 1;
            }
            let health = health_of(&state);
            if health != Health::Ready && !out.unready.iter().any(|(b, _)| b == *board) {
                out.unready.push(((*board).clone(), health));
            }
        }
        Ok(out)
    }

    #[instrument(skip(self))]
    async fn around(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        player: &PlayerId,
        k: u64,
    ) -> Result<Option<Around>, IndexError> {
        let mut inv = self.board_read(&self.scripts.around, lb);
        inv.arg(player.as_str()).arg(k);
        let (state, rank, total, lo, flat): (String, i64, u64, u64, Flat) =
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
            rank_approximate: false,
            total_approximate: false,
        }))
    }

    #[instrument(skip(self))]
    async fn top(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        n: u64,
    ) -> Result<(Vec<RankKey>, u64), IndexError> {
        let mut inv = self.board_read(&self.scripts.top, lb);
        inv.arg(n);
        let (state, flat, total): (String, Flat, u64) = self.invoke(&inv).await?;
        ready(&state)?;
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
        let mut inv = self.board_read(&self.scripts.page, lb);
        match after {
            Some(k) => inv.arg("1").arg(k.zscore(dir)).arg(k.member()),
            None => inv.arg("0").arg(0).arg(""),
        };
        inv.arg(limit);
        let (state, pos, total, flat): (String, u64, u64, Flat) = self.invoke(&inv).await?;
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
        let mut inv = self.board_read(&self.scripts.keys_of, lb);
        for p in players {
            inv.arg(p.as_str());
        }
        let (state, values): (String, Vec<Option<String>>) = self.invoke(&inv).await?;
        ready(&state)?;
        if values.len() != players.len() {
            return Err(reply_err("keys_of reply count"));
        }
        values
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
        let k = self.board_keys(lb);
        let mut inv = self.scripts.init.prepare_invoke();
        inv.key(&k.m)
            .key(&k.z)
            .key(&k.h)
            .arg(expire_at.unwrap_or(0));
        let _set: u8 = self.invoke(&inv).await?;
        Ok(())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn health(&self, boards: &[LeaderboardId]) -> Result<Vec<Health>, IndexError> {
        let keys: Vec<BoardKeys> = boards.iter().map(|lb| self.board_keys(lb)).collect();
        let routing: Vec<String> = keys.iter().map(|k| k.m.clone()).collect();
        let states: Vec<String> = self
            .per_slot(&routing, Some(&self.scripts.health), |pipe, i| {
                let mut inv = self.scripts.health.prepare_invoke();
                inv.key(&keys[i].z).key(&keys[i].h).key(&keys[i].m);
                pipe.invoke_script(&inv);
            })
            .await?;
        Ok(states.iter().map(|s| health_of(s)).collect())
    }

    #[instrument(skip(self))]
    async fn begin_rebuild(
        &self,
        lb: &LeaderboardId,
        gen_id: &str,
        fresh: bool,
    ) -> Result<bool, IndexError> {
        let k = self.board_keys(lb);
        let mut inv = self.scripts.begin.prepare_invoke();
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
            let mut inv = self.scripts.load.prepare_invoke();
            inv.key(&k.tz).key(&k.th);
            for e in chunk {
                standing_args(&mut inv, e);
            }
            pipe.invoke_script(&inv);
        }
        let _loaded: Vec<redis::Value> = self.pipeline_scripts(&self.scripts.load, &pipe).await?;
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
        let mut inv = self.board_write(&self.scripts.finish, &k);
        inv.arg(gen_id).arg(expire_at.unwrap_or(0));
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
        let mut inv = self.board_read(&self.scripts.top_window, lb);
        inv.key(self.board_keys(lb).tv)
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

    #[instrument(skip(self))]
    async fn sketch(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        marks: u64,
        min_size: u64,
    ) -> Result<RankSketch, IndexError> {
        let mut inv = self.board_read(&self.scripts.sketch, lb);
        inv.arg(marks).arg(min_size);
        let (state, total, ranks, flat): (String, u64, Vec<u64>, Flat) = self.invoke(&inv).await?;
        ready(&state)?;
        Ok(RankSketch {
            at: crate::time::now_ms(),
            total,
            ranks,
            keys: decode_entries(dir, flat)?
                .iter()
                .map(|k| k.sort_key(dir))
                .collect(),
        })
    }

    #[instrument(skip(self))]
    async fn claim_repair(&self, lb: &LeaderboardId) -> Result<bool, IndexError> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.board_keys(lb).rq)
            .arg(crate::time::now_ms())
            .arg("NX")
            .arg("PX")
            .arg(REPAIR_CLAIM.as_millis() as u64);
        let set: Option<String> = self.command(&cmd).await?;
        Ok(set.is_some())
    }

    #[instrument(skip_all, fields(count = boards.len()))]
    async fn mark_stale(&self, boards: &[LeaderboardId]) -> Result<u64, IndexError> {
        let markers: Vec<String> = boards.iter().map(|lb| self.marker_key(lb)).collect();
        let marked: Vec<u64> = self
            .per_slot(&markers, Some(&self.scripts.mark_stale), |pipe, i| {
                let mut inv = self.scripts.mark_stale.prepare_invoke();
                inv.key(&markers[i]);
                pipe.invoke_script(&inv);
            })
            .await?;
        Ok(marked.iter().sum())
    }

    #[instrument(skip(self))]
    async fn acquire_lease(
        &self,
        lb: &LeaderboardId,
        owner: &str,
        ttl: Duration,
    ) -> Result<bool, IndexError> {
        let mut inv = self.scripts.lease.prepare_invoke();
        inv.key(self.board_keys(lb).lease)
            .arg(owner)
            .arg(ttl.as_millis().max(1) as u64);
        let held: u8 = self.invoke(&inv).await?;
        Ok(held == 1)
    }

    #[instrument(skip(self))]
    async fn release_lease(&self, lb: &LeaderboardId, owner: &str) -> Result<(), IndexError> {
        let mut inv = self.scripts.release.prepare_invoke();
        inv.key(self.board_keys(lb).lease).arg(owner);
        let _released: u8 = self.invoke(&inv).await?;
        Ok(())
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
            .map(|k| keys::rate_counter(&self.prefix, k))
            .collect();
        let replies: Vec<(u64, i64)> = self
            .per_slot(&counters, Some(&self.scripts.hit), |pipe, i| {
                let mut inv = self.scripts.hit.prepare_invoke();
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
