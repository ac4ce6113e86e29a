-- Shared by every script of the rank index (prepended to each). A board's keys:
--   z   sorted set: zscore -> member (tie-break digits + reached-at, ':', player; see
--       order.rs and `player_of`)
--   h   hash: player -> 'version:stamp|zscore|member'; the stamp (microseconds on this
--       server's clock, see `clock`) says when the entry took its current place, so a
--       walk of the board can tell who moved since it began (values written before
--       stamps existed have none and read as 0: unmoved since forever)
--   m   marker hash: state ('ok' | 'rebuilding' | 'stale'), lineage (the replication id
--       the index was built on), size (players in z and h), gen (the running rebuild),
--       dense ('0' when the board keeps no dense ranks, so no d; absent or '1': kept)
--   d   sorted set of the board's distinct tuples, for dense ranks: on a board without
--       tie-break columns member and score are both the zscore, and a player's dense
--       rank is one more than ZCOUNT of d below theirs; with columns see `tuple_of`
--   x   hash of removed players' tombstones: player -> the version of the removal (an
--       older change of theirs must not bring them back); kept through rebuilds
--   tz, th, td  a rebuild's sorted set, hash and distinct zscores; tv the top-window
--       version

-- The replication history this node's data belongs to. It changes when the node
-- restarts (even from its own snapshot), when a replica is promoted, and from one node
-- to another, i.e. whenever acknowledged writes may be missing from what it holds.
local lineage_now
local function lineage()
  if not lineage_now then
    lineage_now = string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
  end
  return lineage_now
end

-- Players' cards (their profiles' display name, avatar and country, see profile.rs) are
-- copied under `{prefix}pf:{player}` as '{lineage}|{card}', the card being its version
-- and the three fields joined by the unit separator \31 (which no field may hold; an
-- empty field is null), expiring when unread for a while. A copy from another
-- replication history may lack a newer write, so it counts as none (the reader fills it
-- again from DynamoDB). Returns the copy's card, or false.
local function card_copy(value)
  if not value then
    return false
  end
  local from = lineage()
  if string.sub(value, 1, #from + 1) ~= from .. '|' then
    return false
  end
  return string.sub(value, #from + 2)
end

-- A member (order.rs) is a fixed-width prefix of digits, the tie-break columns' (none
-- on a board without columns) then the 13 of reached-at, then ':' and the player: the
-- first ':' ends the prefix.
local function player_of(member)
  return string.sub(member, string.find(member, ':', 1, true) + 1)
end

-- The tie-break digits of a member ('' on a board without columns).
local function ties_of(member)
  return string.sub(member, 1, string.find(member, ':', 1, true) - 14)
end

-- Whether string `a` sorts after `b` byte by byte, as sorted-set members do (Lua's `<`
-- on strings follows the server's locale).
local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end

-- The 0-based rank in `z` of the first entry of zscore `zscore` whose member is at or
-- after `member` (strictly after, when `past`): ZCOUNT over lower scores plus a binary
-- search among the equal ones. `member` may be a prefix, e.g. tie-break digits: the
-- first entry with ties at or after them.
local function position(z, zscore, member, past)
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. zscore)
  local hi = redis.call('ZCOUNT', z, '-inf', zscore)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZRANGE', z, mid, mid)[1]
    if bytes_after(at, member) or (not past and at == member) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

-- The member of `d` for an entry's tuple: on a board without columns the zscore (as
-- given); with columns the zscore (as an integer) then ':' and the ties, scored by the
-- zscore, so equal scores order by their ties and a tuple's rank in `d` is the number
-- of distinct tuples before it.
local function tuple_of(zscore, ties)
  if ties == '' then
    return zscore
  end
  return string.format('%.0f', tonumber(zscore)) .. ':' .. ties
end

-- Whether some entry of `z` still has zscore `zscore` and tie-break digits `ties`.
local function holds(z, zscore, ties)
  if ties == '' then
    return redis.call('ZCOUNT', z, zscore, zscore) > 0
  end
  local at = position(z, zscore, ties, false)
  if at >= redis.call('ZCOUNT', z, '-inf', zscore) then
    return false
  end
  return string.sub(redis.call('ZRANGE', z, at, at)[1], 1, #ties) == ties
end

-- The players of `list`: sorted-set entries with their scores (`kind` 'scored',
-- members at odd places), members alone ('members') or players ('players').
local function players_in(list, kind)
  local players = {}
  local step = kind == 'scored' and 2 or 1
  for i = 1, #list, step do
    local player = list[i]
    if kind ~= 'players' then
      player = player_of(player)
    end
    players[#players + 1] = player
  end
  return players
end

-- The card copies of the players of `list` (see `players_in`); false when `prefix` is
-- empty (on a cluster the copies live in other slots and the caller reads them itself).
local function cards_of(prefix, list, kind)
  if prefix == '' then
    return false
  end
  local keys = {}
  for i, player in ipairs(players_in(list, kind)) do
    keys[i] = prefix .. player
  end
  if #keys == 0 then
    return {}
  end
  local out = redis.call('MGET', unpack(keys))
  for i = 1, #out do
    out[i] = card_copy(out[i])
  end
  return out
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
-- Also returns whether the board keeps its distinct zscores (see `keeps_distinct`), read
-- in the same HMGET.
local function checked(m, z, h)
  local f = redis.call('HMGET', m, 'state', 'lineage', 'size', 'dense')
  local state, keeps = f[1], f[4] ~= '0'
  if not state or state == 'stale' then
    return state or '', keeps
  end
  if f[2] ~= lineage() then
    error({err = 'INDEXMOVED ' .. string.sub(m, 1, -3) .. ' ' .. tostring(f[2])})
  end
  if state == 'ok' then
    local n = redis.call('ZCARD', z)
    if tonumber(f[3]) ~= n or redis.call('HLEN', h) ~= n then
      redis.call('HSET', m, 'state', 'stale')
      return 'stale', keeps
    end
  end
  return state, keeps
end

-- A standing's metadata (compact JSON, see `Metadata` in profile.rs) travels after its
-- member, and is kept after its hash value, behind the record separator \30, which
-- neither a member nor compact JSON holds. Splits it off: (member or value, metadata
-- or '').
local function split_md(s)
  local cut = string.find(s, '\30', 1, true)
  if not cut then
    return s, ''
  end
  return string.sub(s, 1, cut - 1), string.sub(s, cut + 1)
end

-- Parses a hash value into (version, member, zscore, stamp, metadata or '').
local function parse(value)
  local body, md = split_md(value)
  local v, stamp, zscore, member = string.match(body, '^(%d+):?(%d*)|([^|]*)|(.+)$')
  return tonumber(v), member, zscore, tonumber(stamp) or 0, md
end

-- A hash value (see `parse`).
local function value_of(version, stamp, zscore, member, md)
  local v = version .. ':' .. string.format('%.0f', stamp) .. '|' .. zscore .. '|' .. member
  if md and md ~= '' then
    v = v .. '\30' .. md
  end
  return v
end

-- The metadata of the players of `list` (as for `cards_of`) in the board's hash `h`:
-- one string per player, '' for none.
local function metadata_of(h, list, kind)
  local players = players_in(list, kind)
  if #players == 0 then
    return {}
  end
  local out = {}
  for i, value in ipairs(redis.call('HMGET', h, unpack(players))) do
    local md = ''
    if value then
      md = select(2, split_md(value))
    end
    out[i] = md
  end
  return out
end

-- This server's clock in microseconds, read once per script, so every change a script
-- makes carries one stamp and a read's `clock` is comparable with every stamp (both
-- come from the server that holds the board, never from a caller's clock).
local clock_now
local function clock()
  if not clock_now then
    local t = redis.call('TIME')
    clock_now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock_now
end

-- Whether the board of marker `m` keeps its distinct zscores (dense ranks; `checked`
-- reads the same). A board without a marker keeps them: extra work, never a wrong
-- answer, and the rebuild that marks it drops them if the board has no dense ranks.
local function keeps_distinct(m)
  return redis.call('HGET', m, 'dense') ~= '0'
end

-- The distinct-zscores keys to keep in step (live `d`, rebuild's `td`), or false for
-- both when the board keeps none (`keeps` as `checked` returns it).
local function distinct_keys(keeps, d, td)
  if keeps then
    return d, td
  end
  return false, false
end

-- Keeps the distinct tuples `dk` in step with the sorted set `zk` after one of its
-- entries moved from zscore `old` with ties `old_ties` (nil: a new entry) to `new` with
-- `new_ties` (nil: the entry left). `dk` false: the board keeps none.
local function track_distinct(zk, dk, old, old_ties, new, new_ties)
  if (old == new and old_ties == new_ties) or not dk then
    return
  end
  if old and not holds(zk, old, old_ties) then
    redis.call('ZREM', dk, tuple_of(old, old_ties))
  end
  if new then
    redis.call('ZADD', dk, new, tuple_of(new, new_ties))
  end
end

-- The top window of the sorted set `zk` (its first `n` entries), for telling whether a
-- change lands inside it: `edge` is its last entry {score, member}, or false while the
-- set holds no more than `n` entries (every entry is inside). The edge stays put while
-- changes land outside the window, so one read serves every change up to the first that
-- lands inside (after which nobody asks: the window version moves on once per call).
local function window_of(zk, n)
  local e = redis.call('ZRANGE', zk, n - 1, n - 1, 'WITHSCORES')
  if #e == 0 then
    return {n = n, edge = false}
  end
  return {n = n, edge = {tonumber(e[2]), e[1]}}
end

-- Whether the entry (`zscore`, `member`) of `zk` ranks inside `window`: by score against
-- the edge, and on the edge's own score by the rank Redis gives it (ties order by the
-- member's bytes; a member missing from the set, as in a board whose keys split apart,
-- is not inside).
local function inside(zk, window, zscore, member)
  local edge = window.edge
  if not edge then
    return true
  end
  local s = tonumber(zscore)
  if s ~= edge[1] then
    return s < edge[1]
  end
  if member == edge[2] then
    return true
  end
  local r = redis.call('ZRANK', zk, member)
  return r ~= false and r < window.n
end

-- Takes a player's entry out of one sorted set and hash if `version` is not older than
-- theirs. `removed` (an operator's removal) leaves a tombstone in the hash `xk` (player ->
-- version) so that no older change can bring the entry back; otherwise (an erasure)
-- nothing of the player stays. Returns what `put` returns.
local function drop(zk, hk, dk, xk, player, version, removed, window)
  local v = tonumber(version)
  local cur = redis.call('HGET', hk, player)
  local delta, touched = 0, false
  if cur then
    local cv, cm, cz = parse(cur)
    if cv > v then
      return 0, false, false, 0
    end
    if window then
      touched = inside(zk, window, cz, cm)
    end
    redis.call('ZREM', zk, cm)
    redis.call('HDEL', hk, player)
    track_distinct(zk, dk, cz, ties_of(cm), nil, nil)
    delta = -1
  end
  if removed then
    local tomb = tonumber(redis.call('HGET', xk, player) or '0')
    if tomb >= v and not cur then
      return 0, false, false, 0
    end
    if v > tomb then
      redis.call('HSET', xk, player, version)
    end
  else
    redis.call('HDEL', xk, player)
  end
  return 1, false, touched, delta
end

-- Applies one change of a player to one sorted set and hash if its version is newer
-- than theirs (and than their tombstone in `xk`, if they were removed). An empty
-- `zscore` is a removal (`member` 'removed') or an erasure ('erased'), see `drop`.
-- Returns (applied, the player's current member or false, touched, delta): with a
-- `window` (see `window_of`), touched says whether the change landed inside it (the old
-- or the new entry ranks inside); delta is the change in the number of players.
local function put(zk, hk, dk, xk, player, version, zscore, entry, window)
  if zscore == '' then
    return drop(zk, hk, dk, xk, player, version, entry == 'removed', window)
  end
  local member, md = split_md(entry)
  local touched = false
  local old, old_ties
  local cur = redis.call('HGET', hk, player)
  if cur then
    local cv, cm, cz, stamp, cmd = parse(cur)
    old, old_ties = cz, ties_of(cm)
    if cv >= tonumber(version) then
      return 0, cm, false, 0
    end
    if cm == member and cz == zscore then
      -- A newer version of the same entry (a result that changed neither the score nor
      -- when it was reached): only the version (and the metadata) move on; the entry did
      -- not move, so its stamp stays. New metadata inside the window is a change of it.
      redis.call('HSET', hk, player, value_of(version, stamp, zscore, member, md))
      return 1, member, window and cmd ~= md and inside(zk, window, cz, cm) or false, 0
    end
    if window then
      touched = inside(zk, window, cz, cm)
    end
    redis.call('ZREM', zk, cm)
  else
    local tomb = redis.call('HGET', xk, player)
    if tomb then
      if tonumber(tomb) >= tonumber(version) then
        return 0, false, false, 0
      end
      redis.call('HDEL', xk, player)
    end
  end
  redis.call('ZADD', zk, zscore, member)
  redis.call('HSET', hk, player, value_of(version, clock(), zscore, member, md))
  track_distinct(zk, dk, old, old_ties, zscore, ties_of(member))
  if window and not touched then
    touched = inside(zk, window, zscore, member)
  end
  return 1, member, touched, cur and 0 or 1
end

-- The place of the entry (`zs`, `member`) at 0-based rank `rank0` under rank mode
-- `mode` ('unique' gives `rank0` + 1): one more than the entries (competition) or the
-- distinct tuples (dense) strictly better, a tuple being the zscore and the tie-break
-- digits. False when the distinct tuples are missing from a board that has entries
-- (evicted): the caller marks the board stale rather than count from nothing. A dense
-- place on a board that keeps no dense ranks is the error `NODENSE` (callers refuse
-- such reads before asking).
local function place(z, d, m, mode, rank0, zs, member)
  local ties = ties_of(member)
  if mode == 'competition' then
    if ties == '' then
      return redis.call('ZCOUNT', z, '-inf', '(' .. zs) + 1
    end
    return position(z, zs, ties, false) + 1
  elseif mode == 'dense' then
    if not keeps_distinct(m) then
      error({err = 'NODENSE the board keeps no dense ranks'})
    end
    if redis.call('EXISTS', d) == 0 then
      redis.call('HSET', m, 'state', 'stale')
      return false
    end
    if ties == '' then
      return redis.call('ZCOUNT', d, '-inf', '(' .. zs) + 1
    end
    local r = redis.call('ZRANK', d, tuple_of(zs, ties))
    if not r then
      redis.call('HSET', m, 'state', 'stale')
      return false
    end
    return r + 1
  end
  return rank0 + 1
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


-- Sets a closed window's expiry on the board's keys: the sorted sets and hash when a
-- standing applied, the marker when there is one. `expire_at` '0' means never.
local function expire_board(z, h, d, m, expire_at, applied, state, x)
  if expire_at == '0' then
    return
  end
  if applied then
    redis.call('EXPIREAT', z, expire_at)
    redis.call('EXPIREAT', h, expire_at)
    redis.call('EXPIREAT', d, expire_at)
    if x then
      redis.call('EXPIREAT', x, expire_at)
    end
  end
  if state ~= '' then
    redis.call('EXPIREAT', m, expire_at)
  end
end
