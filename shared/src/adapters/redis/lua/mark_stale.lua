-- Marks a board's index as not to be trusted (it will be rebuilt). Boards without a
-- marker are left alone: they are not trusted anyway. Returns 1 when it marked one.
local m = KEYS[1]

if redis.call('EXISTS', m) == 0 then
  return 0
end
redis.call('HSET', m, 'state', 'stale')
return 1
