//! How every call reaches Redis: the shared connection through the circuit breaker, one
//! bounded round trip per call, retried on a dropped connection, a forgotten script or a
//! board to settle; operations over several boards grouped by cluster slot.

use std::future::Future;

use futures::future::try_join_all;
use redis::{Pipeline, RedisResult, Script, ScriptInvocation};

use super::codec::reply_err;
use super::conn::{self, Conn};
use super::lineage::{MAX_SETTLES, moved_boards};
use super::{CONNECT_WAIT, RedisRankIndex};
use leaderboard_core::store::IndexError;

impl RedisRankIndex {
    /// The shared connection, through the breaker; a connection that cannot be opened in
    /// time opens the breaker.
    pub(super) async fn conn(&self) -> Result<Conn, IndexError> {
        self.breaker.check()?;
        let wait = self.timeout.max(CONNECT_WAIT);
        self.link.get(wait).await.inspect_err(|e| {
            if e.is_outage() {
                let why = leaderboard_rules::error::error_chain(e);
                self.breaker.trip(&format!("no connection: {why}"));
            }
        })
    }

    /// Runs `build`'s commands, one per item, and returns their replies in item order.
    /// Items are grouped by the cluster slot of their routing key, one pipeline per slot,
    /// sent concurrently (one pipeline in all on a single node). `script` is loaded and
    /// the pipeline re-run if a node forgot it.
    pub(super) async fn per_slot<T: redis::FromRedisValue>(
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
    pub(super) async fn exchange<T: redis::FromRedisValue>(
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
    pub(super) async fn within<T>(
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
                e.is_connection_refusal() || (super::is_outage(e) && !e.is_connection_dropped())
            }
            Ok(Ok(_)) => false,
        };
        if self.breaker.record(outage) {
            // A connection that stays silent never errors, so the client never replaces
            // it (a hang whose socket was never reset, a peer gone without a word): the
            // call after the cooldown opens a new one.
            self.link.close();
        }
        res.map_err(|_| IndexError::Timeout(self.timeout))
    }

    /// Runs one exchange within the timeout and through the breaker.
    pub(super) async fn bounded<T>(
        &self,
        fut: impl Future<Output = RedisResult<T>>,
    ) -> Result<T, IndexError> {
        self.within(fut).await?.map_err(super::index_error)
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
    pub(super) async fn call<T, F, Fut>(
        &self,
        script: Option<&Script>,
        exchange: F,
    ) -> Result<T, IndexError>
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
                Err(e) => return Err(super::index_error(e)),
            }
        }
    }

    /// A script invocation (see [`Self::call`]).
    pub(super) async fn invoke<T: redis::FromRedisValue>(
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
    pub(super) async fn command<T: redis::FromRedisValue>(
        &self,
        cmd: &redis::Cmd,
    ) -> Result<T, IndexError> {
        self.call(
            None,
            |mut conn| async move { cmd.query_async(&mut conn).await },
        )
        .await
    }

    /// A pipeline of invocations of `script` (see [`Self::call`]).
    pub(super) async fn pipeline_scripts<T: redis::FromRedisValue>(
        &self,
        script: &Script,
        pipe: &redis::Pipeline,
    ) -> Result<T, IndexError> {
        self.call(Some(script), |conn| async move {
            self.exchange(&conn, pipe).await
        })
        .await
    }
}
