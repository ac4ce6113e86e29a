-- Marks the board rebuilding under `gen`, on this node's replication history, keeping
-- dense ranks or not (`dense` '1' or '0': from now on applies follow it). Returns 1
-- when the rebuild can resume (the marker already names `gen`, on this same history), 0
-- when it starts over (the rebuild keys are cleared).
local m, tz, th, td = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local gen, fresh, dense = ARGV[1], ARGV[2], ARGV[3]

local here = lineage()
local f = redis.call('HMGET', m, 'state', 'gen', 'lineage')
if fresh == '0' and f[1] == 'rebuilding' and f[2] == gen and f[3] == here then
  return 1
end
redis.call('DEL', tz, th, td)
redis.call('HSET', m, 'state', 'rebuilding', 'gen', gen, 'lineage', here, 'dense', dense)
return 0
