-- One page in rank order: from the top ('top'), strictly after a key ('after'), the
-- `limit` entries strictly before a key ('before'), or from a 0-based rank ('at'); with
-- the first entry's place under the rank mode, each entry's stamp (when it took its
-- place, see `parse`) and the server's clock now, which a walk compares (pages.rs).
-- Returns {state, 0-based rank of the first entry, size, entries with zscores, place,
-- stamps, clock, the entries' card copies (`cards_of`, with the card prefix `cards`),
-- their metadata (as `metadata_of`)}.
-- A key's position is found as the prelude's `position` finds it.
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, key_zscore, key_member, rank0 = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local limit, mode, cards = tonumber(ARGV[5]), ARGV[6], ARGV[7]

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, 0, {}, 0, {}, 0, false, {}}
end
local pos, count = 0, limit
if kind == 'after' then
  pos = position(z, key_zscore, key_member, true)
elseif kind == 'before' then
  local stop = position(z, key_zscore, key_member, false)
  pos = math.max(0, stop - limit)
  count = stop - pos
elseif kind == 'at' then
  pos = rank0
end
local rows, stamps, mds = {}, {}, {}
if count > 0 then
  rows = redis.call('ZRANGE', z, pos, pos + count - 1, 'WITHSCORES')
end
local first = 1
if #rows > 0 then
  first = place(z, d, m, mode, pos, rows[2], rows[1])
  if not first then
    return {'stale', 0, 0, {}, 0, {}, 0, false, {}}
  end
  local players = {}
  for i = 1, #rows, 2 do
    players[#players + 1] = player_of(rows[i])
  end
  local values = redis.call('HMGET', h, unpack(players))
  for i = 1, #values do
    local stamp, md = 0, ''
    if values[i] then
      local _, _, _, s, vmd = parse(values[i])
      stamp, md = s, vmd
    end
    stamps[i], mds[i] = stamp, md
  end
end
return {state, pos, redis.call('ZCARD', z), rows, first, stamps, clock(), cards_of(cards, rows, 'scored'), mds}
