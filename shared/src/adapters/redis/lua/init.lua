-- Marks a new board's index complete (if it has no marker yet), on this node's
-- replication history, with the size of what its keys already hold (a racing first
-- write may have landed before) and whether it keeps dense ranks ('1' or '0'; without
-- them the distinct zscores a racing write made go). Returns 1 when it set the marker.
local m, z, h, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expire_at, dense = ARGV[1], ARGV[2]

local set = redis.call('HSETNX', m, 'state', 'ok')
if set == 1 then
  local n = redis.call('ZCARD', z)
  redis.call('HSET', m, 'lineage', lineage(), 'size', n, 'dense', dense)
  if dense == '0' then
    redis.call('DEL', d)
  end
  if redis.call('HLEN', h) ~= n then
    redis.call('HSET', m, 'state', 'stale')
  end
end
if expire_at ~= '0' then
  redis.call('EXPIREAT', m, expire_at)
end
return set
