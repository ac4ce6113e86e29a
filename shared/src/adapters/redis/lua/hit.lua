-- One hit on a fixed-window rate-limit counter: {hits in the current window, ms until
-- it ends}. The window starts with its first hit.
local counter = KEYS[1]
local window_ms = ARGV[1]

local n = redis.call('INCR', counter)
if n == 1 then
  redis.call('PEXPIRE', counter, window_ms)
end
return {n, redis.call('PTTL', counter)}
