-- A live view watched until a time: the board's watched set keeps each view with its
-- expiry (epoch ms) and itself expires with the last of them.
local watched = KEYS[1]
local view = ARGV[1]
local until_ms = ARGV[2]

redis.call('ZADD', watched, until_ms, view)
local last = redis.call('ZRANGE', watched, -1, -1, 'WITHSCORES')
redis.call('PEXPIREAT', watched, last[2])
return 1
