-- Swaps the rebuilt keys in if the marker still names `gen` on this same replication
-- history (else 0: the index was wiped, or the node changed, during the rebuild, which
-- must start over); marks the board 'ok' with its size and moves the top-window
-- version on. A board without dense ranks ends with no distinct zscores at all.
local z, h, m, tz, th, tv, d, td = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local gen, expire_at = ARGV[1], ARGV[2]

local state, keeps = checked(m, z, h)
if state ~= 'rebuilding' or redis.call('HGET', m, 'gen') ~= gen then
  return 0
end
if redis.call('ZCARD', tz) ~= redis.call('HLEN', th) then
  return 0
end
if not keeps then
  redis.call('DEL', d, td)
end
if redis.call('EXISTS', tz) == 1 then
  redis.call('RENAME', tz, z)
  redis.call('RENAME', th, h)
  if redis.call('EXISTS', td) == 1 then
    redis.call('RENAME', td, d)
  end
  if expire_at ~= '0' then
    redis.call('EXPIREAT', z, expire_at)
    redis.call('EXPIREAT', h, expire_at)
    redis.call('EXPIREAT', d, expire_at)
  end
else
  redis.call('DEL', z, h, d, td)
end
redis.call('HSET', m, 'state', 'ok', 'size', redis.call('ZCARD', z))
redis.call('HDEL', m, 'gen')
if expire_at ~= '0' then
  redis.call('EXPIREAT', m, expire_at)
end
bump(tv, expire_at)
return 1
