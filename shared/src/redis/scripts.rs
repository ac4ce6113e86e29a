//! The Lua scripts of the rank index. Each runs atomically on the board's slot.
//!
//! Keys of a board (all under the `{<board>}` hash tag): `z` the sorted set, `h` the hash
//! player -> `version|zscore|member`, `m` the marker hash (`state` = `ok` when the index
//! holds the whole board, `rebuilding` while a rebuild loads `tz`/`th`, absent when the
//! index was wiped or never initialised; `gen` names the running rebuild).

/// `put(zset, hash)`: applies ARGV (player, version, zscore, member, _, expire_at) to one
/// pair of keys if the version is newer; returns (applied, the player's current member).
macro_rules! put_fn {
    () => {
        r"
local function put(zk, hk)
  local cur = redis.call('HGET', hk, ARGV[1])
  if cur then
    local v, m = string.match(cur, '^(%d+)|[^|]*|(.+)$')
    if tonumber(v) >= tonumber(ARGV[2]) then
      return 0, m
    end
    redis.call('ZREM', zk, m)
  end
  redis.call('ZADD', zk, ARGV[3], ARGV[4])
  redis.call('HSET', hk, ARGV[1], ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[4])
  if ARGV[6] ~= '0' then
    redis.call('EXPIREAT', zk, ARGV[6])
    redis.call('EXPIREAT', hk, ARGV[6])
  end
  return 1, ARGV[4]
end
"
    };
}

/// KEYS z, h, m, tz, th. Applies to the live keys and, while a rebuild runs, to the
/// rebuild's keys too. Returns {applied, state} or, with ARGV[5] = 1, {applied, state,
/// 0-based rank, size}.
pub const APPLY: &str = concat!(
    put_fn!(),
    r"
local applied, member = put(KEYS[1], KEYS[2])
local state = redis.call('HGET', KEYS[3], 'state') or ''
if state == 'rebuilding' then
  put(KEYS[4], KEYS[5])
end
if state ~= '' and ARGV[6] ~= '0' then
  redis.call('EXPIREAT', KEYS[3], ARGV[6])
end
if ARGV[5] == '0' then
  return {applied, state}
end
return {applied, state, redis.call('ZRANK', KEYS[1], member), redis.call('ZCARD', KEYS[1])}
"
);

/// KEYS tz, th. A rebuild's snapshot load: version-checked, so it never overwrites a
/// newer standing that the write-through or the projector already put there.
pub const LOAD: &str = concat!(
    put_fn!(),
    r"
local applied = put(KEYS[1], KEYS[2])
return applied
"
);

/// KEYS z, h, m; ARGV player, k. {state, 0-based rank or -1, size, 0-based rank of the
/// first neighbour, neighbours with zscores}.
pub const AROUND: &str = r"
local state = redis.call('HGET', KEYS[3], 'state') or ''
local total = redis.call('ZCARD', KEYS[1])
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if not cur then
  return {state, -1, total, 0, {}}
end
local member = string.match(cur, '^%d+|[^|]*|(.+)$')
local r = redis.call('ZRANK', KEYS[1], member)
if not r then
  return {state, -1, total, 0, {}}
end
local k = tonumber(ARGV[2])
local lo = math.max(0, r - k)
return {state, r, total, lo, redis.call('ZRANGE', KEYS[1], lo, r + k, 'WITHSCORES')}
";

/// KEYS z, m. One page after the key (ARGV[2] zscore, ARGV[3] member) when ARGV[1] is
/// 1: {state, 0-based rank of the first entry, size, entries}. The position is ZCOUNT
/// over lower scores plus a binary search among equal scores, comparing members byte
/// by byte (Lua's `<` on strings follows the server's locale, not byte order).
pub const PAGE: &str = r"
local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end
local state = redis.call('HGET', KEYS[2], 'state') or ''
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
return {state, pos, redis.call('ZCARD', KEYS[1]), redis.call('ZRANGE', KEYS[1], pos, pos + n - 1, 'WITHSCORES')}
";

/// KEYS m, tz, th; ARGV gen, fresh. Marks the board rebuilding under `gen`. Returns 1 if
/// the rebuild can resume (the marker already names `gen`), 0 if it starts over (the
/// rebuild keys are cleared).
pub const BEGIN: &str = r"
if ARGV[2] == '0' and redis.call('HGET', KEYS[1], 'gen') == ARGV[1]
   and redis.call('HGET', KEYS[1], 'state') == 'rebuilding' then
  return 1
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'state', 'rebuilding', 'gen', ARGV[1])
return 0
";

/// KEYS z, h, m, tz, th; ARGV gen, expire_at. Swaps the rebuilt keys in if the marker
/// still names `gen` (else 0: the index was wiped meanwhile and the rebuild must start
/// over), and marks the board ok.
pub const FINISH: &str = r"
if redis.call('HGET', KEYS[3], 'gen') ~= ARGV[1] then
  return 0
end
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[1])
  redis.call('RENAME', KEYS[5], KEYS[2])
  if ARGV[2] ~= '0' then
    redis.call('EXPIREAT', KEYS[1], ARGV[2])
    redis.call('EXPIREAT', KEYS[2], ARGV[2])
  end
else
  redis.call('DEL', KEYS[1], KEYS[2])
end
redis.call('HSET', KEYS[3], 'state', 'ok')
redis.call('HDEL', KEYS[3], 'gen')
if ARGV[2] ~= '0' then
  redis.call('EXPIREAT', KEYS[3], ARGV[2])
end
return 1
";

/// KEYS m; ARGV expire_at. Marks a new, empty board's index complete (if unmarked).
pub const INIT: &str = r"
local set = redis.call('HSETNX', KEYS[1], 'state', 'ok')
if ARGV[1] ~= '0' then
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
end
return set
";
