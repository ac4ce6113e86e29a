-- Settles a board whose marker names another replication history (see `checked`),
-- once the caller has asked the cluster whether that history is still a live master's:
-- - live ('1'): the keys were migrated here from that master. The marker takes this
--   node's history, unless the keys did not arrive whole (an 'ok' marker whose size
--   disagrees with them), which makes it 'stale';
-- - not live ('0'): this node's data may lack writes that history acknowledged (a
--   restart, a promoted replica): the marker turns 'stale'.
-- Does nothing if the marker no longer names `from` (another caller settled it).
-- Returns the board's state.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]
local from, live = ARGV[1], ARGV[2]

local f = redis.call('HMGET', m, 'state', 'lineage', 'size')
local state = f[1]
if not state then
  return ''
end
if tostring(f[2]) ~= from or state == 'stale' then
  return state
end
local whole = true
if state == 'ok' then
  local n = redis.call('ZCARD', z)
  whole = tonumber(f[3]) == n and redis.call('HLEN', h) == n
end
if live ~= '1' or not whole then
  redis.call('HSET', m, 'state', 'stale')
  return 'stale'
end
redis.call('HSET', m, 'lineage', lineage())
return state
