-- The best n entries. Returns {state, entries with zscores, size}.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]
local n = tonumber(ARGV[1])

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, {}, 0}
end
return {state, redis.call('ZRANGE', z, 0, n - 1, 'WITHSCORES'), redis.call('ZCARD', z)}
