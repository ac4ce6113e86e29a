-- The best n entries. Returns {state, entries with zscores, size, their card copies
-- (`cards_of`, with the card prefix `cards`), their metadata (`metadata_of`)}.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]
local n, cards = tonumber(ARGV[1]), ARGV[2]

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, {}, 0, false, {}}
end
local rows = redis.call('ZRANGE', z, 0, n - 1, 'WITHSCORES')
return {state, rows, redis.call('ZCARD', z), cards_of(cards, rows, 'scored'), metadata_of(h, rows, 'scored')}
