-- The hash values ('version|zscore|member', or false) of the players in ARGV.
-- Returns {state, values}.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]

local state = checked(m, z, h)
if state ~= 'ok' or #ARGV == 0 then
  return {state, {}}
end
return {state, redis.call('HMGET', h, unpack(ARGV))}
