-- The rows of some players: for each player in ARGV (after the rank mode and the card
-- prefix) who is on the board, their 0-based rank, their place under the mode, and their
-- entry. Returns {state, size, {{player, rank0, place, member, zscore}, ...}, the rows'
-- card copies (`cards_of`), their metadata (as `metadata_of`)}.
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode, cards = ARGV[1], ARGV[2]

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, {}, false, {}}
end
local out = {}
local players, mds = {}, {}
if #ARGV > 2 then
  local values = redis.call('HMGET', h, unpack(ARGV, 3))
  for i = 1, #values do
    if values[i] then
      local _, member, zscore, _, md = parse(values[i])
      local r = redis.call('ZRANK', z, member)
      if r then
        local p = place(z, d, m, mode, r, zscore, member)
        if not p then
          return {'stale', 0, {}, false, {}}
        end
        out[#out + 1] = {ARGV[i + 2], r, p, member, zscore}
        players[#players + 1] = ARGV[i + 2]
        mds[#mds + 1] = md
      end
    end
  end
end
return {state, redis.call('ZCARD', z), out, cards_of(cards, players, 'players'), mds}
