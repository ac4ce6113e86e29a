-- The live views of a board watched now (the expired ones forgotten first).
local watched = KEYS[1]
local now_ms = ARGV[1]

redis.call('ZREMRANGEBYSCORE', watched, '-inf', '(' .. now_ms)
return redis.call('ZRANGE', watched, 0, -1)
