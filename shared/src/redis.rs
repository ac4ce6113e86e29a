//! `RedisRankIndex`: the rank index in Redis, one sorted set and one hash per board.
//!
//! Keys: `{prefix}lb:{<board>}:z` (sorted set, see [`crate::order`] for the encoding) and
//! `{prefix}lb:{<board>}:h` (hash: player -> `version|zscore|member`). Both share the
//! `{<board>}` hash tag, so a board lives in one Redis Cluster slot and every script
//! touches one slot only.
//!
//! Every call is one round trip bounded by the configured timeout; the connection is
//! opened on first use (not at cold start) and re-established by the connection manager.

use std::future::Future;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{RedisResult, Script};
use tokio::sync::OnceCell;
use tracing::instrument;

use crate::error::IndexError;
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::store::{Around, IndexEntry, Placement, RankIndex};

/// Applies one standing if its version is newer than the stored one, then reports the
/// player's 0-based rank and the board size. A stale version changes nothing. ARGV[6],
/// when not 0, is the epoch second at which a closed window's keys expire.
const APPLY: &str = r"
local cur = redis.call('HGET', KEYS[2], ARGV[1])
local member = ARGV[4]
local applied = 1
if cur then
  local v, m = string.match(cur, '^(%d+)|[^|]*|(.+)$')
  if tonumber(v) >= tonumber(ARGV[2]) then
    applied = 0
    member = m
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
if applied == 1 then
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[4])
  if ARGV[6] ~= '0' then
    redis.call('EXPIREAT', KEYS[1], ARGV[6])
    redis.call('EXPIREAT', KEYS[2], ARGV[6])
  end
end
if ARGV[5] == '0' then
  return {applied}
end
return {applied, redis.call('ZRANK', KEYS[1], member), redis.call('ZCARD', KEYS[1])}
";

/// The player's 0-based rank, the board size, the 0-based rank of the first neighbour
/// and the neighbours with their zscores; rank -1 when the player has no entry.
const AROUND: &str = r"
local total = redis.call('ZCARD', KEYS[1])
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if not cur then
  return {-1, total, 0, {}}
end
local member = string.match(cur, '^%d+|[^|]*|(.+)$')
local r = redis.call('ZRANK', KEYS[1], member)
if not r then
  return {-1, total, 0, {}}
end
local k = tonumber(ARGV[2])
local lo = math.max(0, r - k)
return {r, total, lo, redis.call('ZRANGE', KEYS[1], lo, r + k, 'WITHSCORES')}
";

/// One page in rank order after the key (ARGV[2] zscore, ARGV[3] member) when ARGV[1]
/// is 1: the 0-based rank of the first entry, the board size, and the entries. The
/// position is found by ZCOUNT over lower scores plus a binary search among equal
/// scores, comparing members byte by byte (Lua's `<` on strings follows the server's
/// locale, which need not be byte order).
const PAGE: &str = r"
local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local pos = 0
if ARGV[1] == '1' then
  local lo = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[2])
  local hi = redis.call('ZCOUNT', KEYS[1], '-inf', ARGV[2])
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if bytes_after(redis.call('ZRANGE', KEYS[1], mid, mid)[1], ARGV[3]) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  pos = lo
end
local n = tonumber(ARGV[4])
return {pos, redis.call('ZCARD', KEYS[1]), redis.call('ZRANGE', KEYS[1], pos, pos + n - 1, 'WITHSCORES')}
";

/// The Redis adapter of [`RankIndex`].
pub struct RedisRankIndex {
    client: redis::Client,
    conn: OnceCell<ConnectionManager>,
    prefix: String,
    timeout: Duration,
    apply: Script,
    around: Script,
    page: Script,
}

impl RedisRankIndex {
    /// Parses the URL; connects lazily on first use. `prefix` is prepended to every key
    /// (tests use it to isolate themselves); `timeout` bounds every call.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> Result<Self, IndexError> {
        Ok(Self {
            client: redis::Client::open(url)?,
            conn: OnceCell::new(),
            prefix: prefix.to_owned(),
            timeout,
            apply: Script::new(APPLY),
            around: Script::new(AROUND),
            page: Script::new(PAGE),
        })
    }

    /// The sorted-set and hash keys of a board.
    pub fn keys(&self, lb: &LeaderboardId) -> (String, String) {
        let base = format!("{}lb:{{{lb}}}", self.prefix);
        (format!("{base}:z"), format!("{base}:h"))
    }

    async fn conn(&self) -> Result<ConnectionManager, IndexError> {
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1);
        let conn = self
            .bounded(self.conn.get_or_try_init(|| {
                ConnectionManager::new_with_config(self.client.clone(), config)
            }))
            .await?;
        Ok(conn.clone())
    }

    /// Runs one Redis exchange within the timeout budget, keeping Redis' own error.
    async fn within<T>(
        &self,
        fut: impl Future<Output = RedisResult<T>>,
    ) -> Result<RedisResult<T>, IndexError> {
        tokio::time::timeout(self.timeout, fut)
            .await
            .map_err(|_| IndexError::Timeout(self.timeout))
    }

    /// Runs one Redis exchange within the timeout budget.
    async fn bounded<T>(&self, fut: impl Future<Output = RedisResult<T>>) -> Result<T, IndexError> {
        Ok(self.within(fut).await??)
    }

    fn apply_invocation<'a>(
        &'a self,
        entry: &IndexEntry,
        want_rank: bool,
    ) -> redis::ScriptInvocation<'a> {
        let (z, h) = self.keys(&entry.board);
        let mut inv = self.apply.prepare_invoke();
        inv.key(z)
            .key(h)
            .arg(&entry.key.player)
            .arg(entry.version)
            .arg(entry.key.zscore(entry.direction))
            .arg(entry.key.member())
            .arg(if want_rank { "1" } else { "0" })
            .arg(entry.expire_at.unwrap_or(0));
        inv
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

/// Parses a hash value `version|zscore|member` into its key.
fn decode_hash_value(dir: Direction, value: &str) -> Option<RankKey> {
    let mut parts = value.splitn(3, '|');
    let _version = parts.next()?;
    let zscore: f64 = parts.next()?.parse().ok()?;
    RankKey::from_entry(dir, parts.next()?, zscore)
}

impl RankIndex for RedisRankIndex {
    #[instrument(skip_all, fields(board = %entry.board, player = %entry.key.player, version = entry.version))]
    async fn apply(&self, entry: &IndexEntry) -> Result<Placement, IndexError> {
        let mut conn = self.conn().await?;
        let inv = self.apply_invocation(entry, true);
        let (applied, rank, total): (u8, u64, u64) =
            self.bounded(inv.invoke_async(&mut conn)).await?;
        Ok(Placement {
            applied: applied == 1,
            rank: rank + 1,
            total,
        })
    }

    #[instrument(skip_all, fields(count = entries.len()))]
    async fn apply_many(&self, entries: &[IndexEntry]) -> Result<Vec<bool>, IndexError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        let mut pipe = redis::pipe();
        for entry in entries {
            pipe.invoke_script(&self.apply_invocation(entry, false));
        }
        let first: RedisResult<Vec<(u8,)>> = self.within(pipe.query_async(&mut conn)).await?;
        let replies = match first {
            Ok(r) => r,
            // A restarted or flushed server forgot the script: load it and run again
            // (applies are version-checked, so running twice is harmless).
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                self.bounded(self.apply.load_async(&mut conn)).await?;
                self.bounded(pipe.query_async(&mut conn)).await?
            }
            Err(e) => return Err(e.into()),
        };
        Ok(replies.into_iter().map(|(a,)| a == 1).collect())
    }

    #[instrument(skip(self))]
    async fn around(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        player: &PlayerId,
        k: u64,
    ) -> Result<Option<Around>, IndexError> {
        let mut conn = self.conn().await?;
        let (z, h) = self.keys(lb);
        let mut inv = self.around.prepare_invoke();
        inv.key(z).key(h).arg(player.as_str()).arg(k);
        let (rank, total, lo, flat): (i64, u64, u64, Vec<(String, f64)>) =
            self.bounded(inv.invoke_async(&mut conn)).await?;
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
        let mut conn = self.conn().await?;
        let (z, _) = self.keys(lb);
        let last = n.saturating_sub(1) as i64;
        let (flat, total): (Vec<(String, f64)>, u64) = self
            .bounded(
                redis::pipe()
                    .zrange_withscores(&z, 0, last as isize)
                    .zcard(&z)
                    .query_async(&mut conn),
            )
            .await?;
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
        let mut conn = self.conn().await?;
        let (z, _) = self.keys(lb);
        let mut inv = self.page.prepare_invoke();
        inv.key(z);
        match after {
            Some(k) => inv.arg("1").arg(k.zscore(dir)).arg(k.member()),
            None => inv.arg("0").arg(0).arg(""),
        };
        inv.arg(limit);
        let (pos, total, flat): (u64, u64, Vec<(String, f64)>) =
            self.bounded(inv.invoke_async(&mut conn)).await?;
        Ok((pos, decode_entries(dir, flat)?, total))
    }

    #[instrument(skip(self, players), fields(count = players.len()))]
    async fn keys_of(
        &self,
        lb: &LeaderboardId,
        dir: Direction,
        players: &[PlayerId],
    ) -> Result<Vec<Option<RankKey>>, IndexError> {
        if players.is_empty() {
            return Ok(Vec::new());
        }
        let mut conn = self.conn().await?;
        let (_, h) = self.keys(lb);
        let names: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
        let values: Vec<Option<String>> = self
            .bounded(
                redis::cmd("HMGET")
                    .arg(&h)
                    .arg(&names)
                    .query_async(&mut conn),
            )
            .await?;
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
}
