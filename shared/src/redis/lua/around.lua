-- A player's rank and k neighbours on each side.
-- Returns {state, 0-based rank or -1, size, 0-based rank of the first neighbour,
-- neighbours with zscores}; only the state when the board is not 'ok'.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]
local player, k = ARGV[1], tonumber(ARGV[2])

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, -1, 0, 0, {}}
end
local total = redis.call('ZCARD', z)
local cur = redis.call('HGET', h, player)
if not cur then
  return {state, -1, total, 0, {}}
end
local _, member = parse(cur)
local r = redis.call('ZRANK', z, member)
if not r then
  return {state, -1, total, 0, {}}
end
local lo = math.max(0, r - k)
return {state, r, total, lo, redis.call('ZRANGE', z, lo, r + k, 'WITHSCORES')}
