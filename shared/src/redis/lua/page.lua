-- One page in rank order: from the top ('top'), strictly after a key ('after'), the
-- `limit` entries strictly before a key ('before'), or from a 0-based rank ('at'); with
-- the first entry's place under the rank mode, each entry's stamp (when it took its
-- place, see `parse`) and the server's clock now, which a walk compares (pages.rs).
-- Returns {state, 0-based rank of the first entry, size, entries with zscores, place,
-- stamps, clock, the entries' card copies (`cards_of`, with the card prefix `cards`),
-- their metadata (as `metadata_of`)}.
-- A key's position is ZCOUNT over lower scores plus a binary search among equal scores,
-- comparing members byte by byte (Lua's `<` on strings follows the server's locale).
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local kind, key_zscore, key_member, rank0 = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local limit, mode, cards = tonumber(ARGV[5]), ARGV[6], ARGV[7]

local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end

-- The 0-based rank of the first entry after the key (`past`), or at or after it.
local function position(past)
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. key_zscore)
  local hi = redis.call('ZCOUNT', z, '-inf', key_zscore)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local at = redis.call('ZRANGE', z, mid, mid)[1]
    if bytes_after(at, key_member) or (not past and at == key_member) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  return lo
end

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, 0, {}, 0, {}, 0, false, {}}
end
local pos, count = 0, limit
if kind == 'after' then
  pos = position(true)
elseif kind == 'before' then
  local stop = position(false)
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
  first = place(z, d, m, mode, pos, rows[2])
  if not first then
    return {'stale', 0, 0, {}, 0, {}, 0, false, {}}
  end
  local players = {}
  for i = 1, #rows, 2 do
    -- A member is the 13-digit reached-at, ':', then the player (order.rs).
    players[#players + 1] = string.sub(rows[i], 15)
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
