-- Shared by every script of the rank index (prepended to each). A board's keys:
--   z   sorted set: zscore -> member (reached-at + player, see order.rs)
--   h   hash: player -> 'version|zscore|member'
--   m   marker hash: state ('ok' | 'rebuilding' | 'stale'), lineage (the replication id
--       the index was built on), size (players in z and h), gen (the running rebuild)
--   tz, th  a rebuild's sorted set and hash; tv the top-window version

-- The replication history this node's data belongs to. It changes when the node
-- restarts (even from its own snapshot), when a replica is promoted, and from one node
-- to another, i.e. whenever acknowledged writes may be missing from what it holds.
local function lineage()
  return string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
end

-- The board's state after checking that its index is still the one it was built on:
-- 'ok', 'rebuilding', 'stale', or '' (no marker: never built, wiped or expired).
-- - A marker from another replication history stops the script with the error
--   `INDEXMOVED <key base> <that history>`, before it changes anything: either the
--   board's keys were migrated here intact from a live master (a slot move), which the
--   caller confirms with the cluster and answers by adopting the board here (adopt.lua),
--   or this node's history is not the one the index was built on (a restart, a promoted
--   replica that may lack acknowledged writes), and the caller marks the board stale.
-- - An 'ok' marker whose size disagrees with its sorted set and hash (keys split apart
--   by a move) turns 'stale' here and now.
-- Only a rebuild makes a 'stale' board 'ok' again.
local function checked(m, z, h)
  local f = redis.call('HMGET', m, 'state', 'lineage', 'size')
  local state = f[1]
  if not state or state == 'stale' then
    return state or ''
  end
  if f[2] ~= lineage() then
    error({err = 'INDEXMOVED ' .. string.sub(m, 1, -3) .. ' ' .. tostring(f[2])})
  end
  if state == 'ok' then
    local n = redis.call('ZCARD', z)
    if tonumber(f[3]) ~= n or redis.call('HLEN', h) ~= n then
      redis.call('HSET', m, 'state', 'stale')
      return 'stale'
    end
  end
  return state
end

-- Parses a hash value into (version, member).
local function parse(value)
  local v, member = string.match(value, '^(%d+)|[^|]*|(.+)$')
  return tonumber(v), member
end

-- Applies one standing to one sorted set and hash if its version is newer. Returns
-- (applied, the player's current member, touched, added): with `track`, touched says
-- whether the change landed inside the top window (the old or the new entry ranks below
-- `window`); added, whether the player is new to these keys.
local function put(zk, hk, player, version, zscore, member, track, window)
  local touched = false
  local cur = redis.call('HGET', hk, player)
  if cur then
    local cv, cm = parse(cur)
    if cv >= tonumber(version) then
      return 0, cm, false, false
    end
    if track then
      local r = redis.call('ZRANK', zk, cm)
      touched = r ~= false and r < window
    end
    redis.call('ZREM', zk, cm)
  end
  redis.call('ZADD', zk, zscore, member)
  redis.call('HSET', hk, player, version .. '|' .. zscore .. '|' .. member)
  if track and not touched then
    touched = redis.call('ZRANK', zk, member) < window
  end
  return 1, member, touched, not cur
end

-- Moves a board's top-window version on. A missing version (never set, flushed,
-- expired) starts from the server clock in nanoseconds, so it can never return to a
-- value a reader cached before the key disappeared.
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


-- Sets a closed window's expiry on the board's keys: the sorted set and hash when a
-- standing applied, the marker when there is one. `expire_at` '0' means never.
local function expire_board(z, h, m, expire_at, applied, state)
  if expire_at == '0' then
    return
  end
  if applied then
    redis.call('EXPIREAT', z, expire_at)
    redis.call('EXPIREAT', h, expire_at)
  end
  if state ~= '' then
    redis.call('EXPIREAT', m, expire_at)
  end
end
