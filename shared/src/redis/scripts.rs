//! The Lua scripts of the rank index. Each runs atomically on the board's slot.
//!
//! Keys of a board (all under the `{<board>}` hash tag): `z` the sorted set, `h` the hash
//! player -> `version|zscore|member`, `m` the marker hash (`state` = `ok` when the index
//! holds the whole board, `rebuilding` while a rebuild loads `tz`/`th`, absent when the
//! index was wiped or never initialised; `gen` names the running rebuild).

/// `put(zset, hash, player, version, zscore, member, track, window)`: applies one
/// standing to one pair of keys if its version is newer; returns (applied, the player's
/// current member, touched). With `track`, `touched` says whether the change landed
/// inside the top window (the old or the new entry ranks below `window`).
macro_rules! put_fn {
    () => {
        r"
local function put(zk, hk, p, v, z, m, track, w)
  local touched = false
  local cur = redis.call('HGET', hk, p)
  if cur then
    local cv, cm = string.match(cur, '^(%d+)|[^|]*|(.+)$')
    if tonumber(cv) >= tonumber(v) then
      return 0, cm, false
    end
    if track then
      local r = redis.call('ZRANK', zk, cm)
      touched = r ~= false and r < w
    end
    redis.call('ZREM', zk, cm)
  end
  redis.call('ZADD', zk, z, m)
  redis.call('HSET', hk, p, v .. '|' .. z .. '|' .. m)
  if track and not touched then
    touched = redis.call('ZRANK', zk, m) < w
  end
  return 1, m, touched
end
"
    };
}

/// `bump(tv, expire_at)`: moves a board's top-window version on. A missing version
/// (never set, flushed, expired) starts from the server clock in nanoseconds, so it can
/// never return to a value a reader cached before the key disappeared.
macro_rules! bump_fn {
    () => {
        r"
local function bump(tv, expire_at)
  if redis.call('EXISTS', tv) == 1 then
    redis.call('INCR', tv)
  else
    local t = redis.call('TIME')
    redis.call('SET', tv, t[1] .. string.format('%06d', tonumber(t[2])) .. '000')
  end
  if expire_at ~= '0' then
    redis.call('EXPIREAT', tv, expire_at)
  end
end
"
    };
}

/// KEYS z, h, m, tz, th, tv; ARGV player, version, zscore, member, want_rank,
/// expire_at, window. Applies to the live keys and, while a rebuild runs, to the
/// rebuild's keys too; bumps the top-window version when the change lands inside the
/// window. Returns {applied, state} or, with want_rank = 1, {applied, state, 0-based
/// rank, size}.
pub const APPLY: &str = concat!(
    put_fn!(),
    bump_fn!(),
    r"
local w = tonumber(ARGV[7])
local applied, member, touched = put(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], true, w)
if applied == 1 and ARGV[6] ~= '0' then
  redis.call('EXPIREAT', KEYS[1], ARGV[6])
  redis.call('EXPIREAT', KEYS[2], ARGV[6])
end
local state = redis.call('HGET', KEYS[3], 'state') or ''
if state == 'rebuilding' then
  put(KEYS[4], KEYS[5], ARGV[1], ARGV[2], ARGV[3], ARGV[4], false, w)
end
if touched then
  bump(KEYS[6], ARGV[6])
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

/// KEYS z, h, m, tz, th, tv; ARGV window, expire_at, then (player, version, zscore,
/// member) per standing. APPLY for many standings of one board, in order (a player
/// repeated in the batch sees its own earlier change), with the marker read, the window
/// bump and the expiries done once per call. Returns 1/0 (applied) per standing.
pub const APPLY_MANY: &str = concat!(
    put_fn!(),
    bump_fn!(),
    r"
local w = tonumber(ARGV[1])
local state = redis.call('HGET', KEYS[3], 'state') or ''
local rebuilding = state == 'rebuilding'
local track, bumped, any = true, false, false
local out = {}
for i = 3, #ARGV, 4 do
  local a, _, t = put(KEYS[1], KEYS[2], ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], track, w)
  if rebuilding then
    put(KEYS[4], KEYS[5], ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3], false, w)
  end
  if t then
    track, bumped = false, true
  end
  any = any or a == 1
  out[#out + 1] = a
end
if bumped then
  bump(KEYS[6], ARGV[2])
end
if ARGV[2] ~= '0' then
  if any then
    redis.call('EXPIREAT', KEYS[1], ARGV[2])
    redis.call('EXPIREAT', KEYS[2], ARGV[2])
  end
  if state ~= '' then
    redis.call('EXPIREAT', KEYS[3], ARGV[2])
  end
end
return out
"
);

/// KEYS tz, th; ARGV (player, version, zscore, member) repeated, players distinct. A
/// rebuild's snapshot load, many entries per call: version-checked against what the
/// write-through or the projector already put there (one HMGET), then one ZREM, one
/// ZADD and one HSET for the whole batch. Returns how many entries applied.
pub const LOAD: &str = r"
local n = #ARGV / 4
local players = {}
for i = 1, n do
  players[i] = ARGV[4 * i - 3]
end
local cur = redis.call('HMGET', KEYS[2], unpack(players))
local zrem, zadd, hset = {}, {}, {}
for i = 1, n do
  local p, v, z, m = ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i]
  local keep = true
  if cur[i] then
    local cv, cm = string.match(cur[i], '^(%d+)|[^|]*|(.+)$')
    if tonumber(cv) >= tonumber(v) then
      keep = false
    else
      zrem[#zrem + 1] = cm
    end
  end
  if keep then
    zadd[#zadd + 1] = z
    zadd[#zadd + 1] = m
    hset[#hset + 1] = p
    hset[#hset + 1] = v .. '|' .. z .. '|' .. m
  end
end
if #zrem > 0 then
  redis.call('ZREM', KEYS[1], unpack(zrem))
end
if #zadd > 0 then
  redis.call('ZADD', KEYS[1], unpack(zadd))
  redis.call('HSET', KEYS[2], unpack(hset))
end
return #zadd / 2
";

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

/// KEYS z, h, m, tz, th, tv; ARGV gen, expire_at. Swaps the rebuilt keys in if the
/// marker still names `gen` (else 0: the index was wiped meanwhile and the rebuild must
/// start over), marks the board ok and moves the top-window version on.
pub const FINISH: &str = concat!(
    bump_fn!(),
    r"
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
bump(KEYS[6], ARGV[2])
return 1
"
);

/// KEYS m; ARGV expire_at. Marks a new, empty board's index complete (if unmarked).
pub const INIT: &str = r"
local set = redis.call('HSETNX', KEYS[1], 'state', 'ok')
if ARGV[1] ~= '0' then
  redis.call('EXPIREAT', KEYS[1], ARGV[1])
end
return set
";

/// KEYS z, m, tv; ARGV known version, window size. The top window of a board for a
/// reader that holds version ARGV[1]: {state, version, size, false} when that is still
/// current, else {state, version, size, the first ARGV[2] entries with zscores}. On a
/// complete board a missing version is created (expiring with the board), so readers
/// always have one; on any other only the state comes back.
pub const TOP_WINDOW: &str = concat!(
    bump_fn!(),
    r"
local state = redis.call('HGET', KEYS[2], 'state') or ''
if state ~= 'ok' then
  return {state, '', 0, false}
end
local v = redis.call('GET', KEYS[3])
if not v then
  bump(KEYS[3], '0')
  local ttl = redis.call('PTTL', KEYS[1])
  if ttl > 0 then
    redis.call('PEXPIRE', KEYS[3], ttl)
  end
  v = redis.call('GET', KEYS[3])
end
local total = redis.call('ZCARD', KEYS[1])
if v == ARGV[1] then
  return {state, v, total, false}
end
return {state, v, total, redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[2]) - 1, 'WITHSCORES')}
"
);

/// KEYS counter; ARGV window ms. One hit on a fixed-window rate-limit counter: {hits in
/// the current window, ms until it ends}. The window starts with its first hit.
pub const HIT: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return {n, redis.call('PTTL', KEYS[1])}
";
