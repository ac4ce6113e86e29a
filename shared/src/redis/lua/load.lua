-- A rebuild's snapshot load, many entries per call: version-checked against what the
-- write-through or the projector already put there (one HMGET), then one ZREM, one ZADD
-- and one HSET for the whole batch, then the distinct zscores brought in step. ARGV:
-- (player, version, zscore, member) repeated, players distinct. Returns how many entries
-- applied.
local tz, th, td = KEYS[1], KEYS[2], KEYS[3]

local n = #ARGV / 4
local players = {}
for i = 1, n do
  players[i] = ARGV[4 * i - 3]
end
local cur = redis.call('HMGET', th, unpack(players))
local zrem, zadd, hset, gone, seen = {}, {}, {}, {}, {}
for i = 1, n do
  local player, version, zscore, member = ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i]
  local keep = true
  if cur[i] then
    local cv, cm, cz = parse(cur[i])
    if cv >= tonumber(version) then
      keep = false
    else
      zrem[#zrem + 1] = cm
      gone[#gone + 1] = cz
    end
  end
  if keep then
    zadd[#zadd + 1] = zscore
    zadd[#zadd + 1] = member
    hset[#hset + 1] = player
    hset[#hset + 1] = version .. '|' .. zscore .. '|' .. member
  end
end
if #zrem > 0 then
  redis.call('ZREM', tz, unpack(zrem))
end
if #zadd > 0 then
  redis.call('ZADD', tz, unpack(zadd))
  redis.call('HSET', th, unpack(hset))
end
for _, cz in ipairs(gone) do
  if not seen[cz] and redis.call('ZCOUNT', tz, cz, cz) == 0 then
    redis.call('ZREM', td, cz)
  end
  seen[cz] = true
end
if #zadd > 0 then
  local dadd = {}
  for i = 1, #zadd, 2 do
    dadd[#dadd + 1] = zadd[i]
    dadd[#dadd + 1] = zadd[i]
  end
  redis.call('ZADD', td, unpack(dadd))
end
return #zadd / 2
