-- The next seat of a tournament occurrence to try (docs/tournaments.md): a seat given
-- back first, else the next one never handed out, raised to at least `floor` (the
-- joiner found the seats below it taken: the counter was lost). A hint only: the seat
-- items in DynamoDB decide.
local counter = KEYS[1]
local given = KEYS[2]
local floor = tonumber(ARGV[1])
local expire_at = ARGV[2]

local seat = redis.call('LPOP', given)
if seat then
  seat = tonumber(seat)
else
  local n = redis.call('INCR', counter)
  if n <= floor then
    redis.call('SET', counter, floor + 1)
    n = floor + 1
  end
  seat = n - 1
end
redis.call('EXPIREAT', counter, expire_at)
return seat
