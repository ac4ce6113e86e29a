-- A view's push gate: taken for the gap if free, answering {0, the view's last push or
-- nil}; else {ms until it is free, nil}. (GET answers false for a missing key, which
-- the reply carries as nil.)
local gate = KEYS[1]
local state = KEYS[2]
local gap_ms = ARGV[1]

if redis.call('SET', gate, '1', 'NX', 'PX', gap_ms) then
  return {0, redis.call('GET', state)}
end
return {math.max(redis.call('PTTL', gate), 1), false}
