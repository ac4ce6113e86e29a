-- A rebuild's snapshot load, many entries per call: version-checked against what the
-- write-through or the projector already put there (one HMGET), then one ZREM, one ZADD
-- and one HSET for the whole batch. ARGV: (player, version, zscore, member) repeated,
-- players distinct. Returns how many entries applied.
local tz, th = KEYS[1], KEYS[2]

local n = #ARGV / 4
local players = {}
for i = 1, n do
  players[i] = ARGV[4 * i - 3]
end
local cur = redis.call('HMGET', th, unpack(players))
local zrem, zadd, hset = {}, {}, {}
for i = 1, n do
  local player, version, zscore, member = ARGV[4 * i - 3], ARGV[4 * i - 2], ARGV[4 * i - 1], ARGV[4 * i]
  local keep = true
  if cur[i] then
    local cv, cm = parse(cur[i])
    if cv >= tonumber(version) then
      keep = false
    else
      zrem[#zrem + 1] = cm
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
return #zadd / 2
