-- A player's rank and k neighbours on each side, with the first neighbour's place under
-- the rank mode. Returns {state, 0-based rank or -1, size, 0-based rank of the first
-- neighbour, neighbours with zscores, the first neighbour's place}; only the state when
-- the board is not 'ok'; last, the neighbours' card copies (`cards_of`, with the card
-- prefix `cards`, false without one) and their metadata (`metadata_of`).
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local player, k, mode, cards = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, -1, 0, 0, {}, 0, false, {}}
end
local total = redis.call('ZCARD', z)
local cur = redis.call('HGET', h, player)
if not cur then
  return {state, -1, total, 0, {}, 0, false, {}}
end
local _, member = parse(cur)
local r = redis.call('ZRANK', z, member)
if not r then
  return {state, -1, total, 0, {}, 0, false, {}}
end
local lo = math.max(0, r - k)
local rows = redis.call('ZRANGE', z, lo, r + k, 'WITHSCORES')
local first = place(z, d, m, mode, lo, rows[2], rows[1])
if not first then
  return {'stale', -1, 0, 0, {}, 0, false, {}}
end
return {state, r, total, lo, rows, first, cards_of(cards, rows, 'scored'), metadata_of(h, rows, 'scored')}
