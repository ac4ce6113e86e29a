-- Takes a board's rebuild lease for `ttl_ms`, or renews it when `owner` holds it
-- already. Returns 1 when `owner` holds it now, 0 when another owner does.
local lease = KEYS[1]
local owner, ttl_ms = ARGV[1], ARGV[2]

local cur = redis.call('GET', lease)
if cur == owner then
  redis.call('PEXPIRE', lease, ttl_ms)
  return 1
end
if cur then
  return 0
end
redis.call('SET', lease, owner, 'PX', ttl_ms)
return 1
