-- A rebuild's snapshot load, many entries per call: version-checked against what the
-- write-through or the projector already put there and against the board's tombstones
-- (one HMGET each), then one ZREM, one ZADD and one HSET for the whole batch, then the
-- distinct zscores brought in step. A removed standing in the snapshot (empty zscore)
-- takes its entry out and keeps its tombstone in `x`, which outlives the swap. The
-- distinct zscores are left out when the marker `m` says the board keeps no dense
-- ranks. Loaded entries are stamped now: a walk that began before the rebuild cannot
-- know where they stood, so it counts them as moved. ARGV: (player, version, zscore, member) repeated, players distinct. Returns
-- how many standings applied.
local tz, th, td, x, m = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local dense = keeps_distinct(m)

local n = #ARGV / 4
local players = {}
for i = 1, n do
  players[i] = ARGV[4 * i - 3]
end
local cur = redis.call('HMGET', th, unpack(players))
local tombs = redis.call('HMGET', x, unpack(players))
local zrem, zadd, hset, hdel, gone, seen = {}, {}, {}, {}, {}, {}
for i = 1, n do
  local player, version, zscore = ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1]
  local member, md = split_md(ARGV[4 * i])
  local v = tonumber(version)
  local keep = not (tombs[i] and tonumber(tombs[i]) >= v)
  if cur[i] then
    local cv, cm, cz = parse(cur[i])
    if cv >= v then
      keep = false
    elseif keep then
      zrem[#zrem + 1] = cm
      gone[#gone + 1] = {cz, ties_of(cm)}
    end
  end
  if keep and zscore == '' then
    if cur[i] then
      hdel[#hdel + 1] = player
    end
    redis.call('HSET', x, player, version)
  elseif keep then
    zadd[#zadd + 1] = zscore
    zadd[#zadd + 1] = member
    hset[#hset + 1] = player
    hset[#hset + 1] = value_of(version, clock(), zscore, member, md)
  end
end
if #zrem > 0 then
  redis.call('ZREM', tz, unpack(zrem))
end
if #hdel > 0 then
  redis.call('HDEL', th, unpack(hdel))
end
if #zadd > 0 then
  redis.call('ZADD', tz, unpack(zadd))
  redis.call('HSET', th, unpack(hset))
end
if not dense then
  return #zadd / 2
end
for _, old in ipairs(gone) do
  local tuple = tuple_of(old[1], old[2])
  if not seen[tuple] and not holds(tz, old[1], old[2]) then
    redis.call('ZREM', td, tuple)
  end
  seen[tuple] = true
end
if #zadd > 0 then
  local dadd = {}
  for i = 1, #zadd, 2 do
    dadd[#dadd + 1] = zadd[i]
    dadd[#dadd + 1] = tuple_of(zadd[i], ties_of(zadd[i + 1]))
  end
  redis.call('ZADD', td, unpack(dadd))
end
return #zadd / 2
