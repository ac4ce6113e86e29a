-- The top window for a reader holding version `known`: {state, version, size, false,
-- clock} while that is still current, else {state, version, size, the first `window`
-- entries with zscores, clock} (the server's clock, as page.lua returns it). On an 'ok'
-- board a missing version is created (expiring with the board), so readers always have
-- one; on any other only the state comes back. Last, the card copies of the first
-- `named` entries (`cards_of`, with the card prefix `cards`): always when the window
-- moved, and while it is current unless the reader holds fresh copies (`held` = '1');
-- with them, the same entries' metadata (`metadata_of`), or false when no cards are
-- sent (a reader holding cards holds the metadata read with them).
local z, h, m, tv = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local known, window, named, cards = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local held = ARGV[5] == '1'

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, '', 0, false, 0, false, false}
end
local v = redis.call('GET', tv)
if not v then
  bump(tv, '0')
  local ttl = redis.call('PTTL', z)
  if ttl > 0 then
    redis.call('PEXPIRE', tv, ttl)
  end
  v = redis.call('GET', tv)
end
local total = redis.call('ZCARD', z)
local rows = false
if v ~= known then
  rows = redis.call('ZRANGE', z, 0, window - 1, 'WITHSCORES')
end
-- The named entries' cards: from the rows just read, or (the reader's window being
-- current) from the members of the first `named`.
local named_cards, named_md = false, false
if named > 0 then
  local first, kind = false, 'scored'
  if rows then
    first = {unpack(rows, 1, math.min(#rows, 2 * named))}
  elseif not held then
    first, kind = redis.call('ZRANGE', z, 0, named - 1), 'members'
  end
  if first then
    named_cards = cards_of(cards, first, kind)
    named_md = metadata_of(h, first, kind)
  end
end
return {state, v, total, rows, clock(), named_cards, named_md}
