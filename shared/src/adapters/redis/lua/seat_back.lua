-- A seat a join handed out and did not take, given back for the next join.
local given = KEYS[1]
local seat = ARGV[1]
local expire_at = ARGV[2]

redis.call('RPUSH', given, seat)
redis.call('EXPIREAT', given, expire_at)
return 1
