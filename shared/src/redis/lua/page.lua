-- One page strictly after a key (when has_after is '1'), in rank order, with the first
-- entry's place under the rank mode.
-- Returns {state, 0-based rank of the first entry, size, entries with zscores, place}.
-- The position is ZCOUNT over lower scores plus a binary search among equal scores,
-- comparing members byte by byte (Lua's `<` on strings follows the server's locale).
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local has_after, after_zscore, after_member, limit, mode = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5]

local function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x > y
    end
  end
  return #a > #b
end

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, 0, {}, 0}
end
local pos = 0
if has_after == '1' then
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. after_zscore)
  local hi = redis.call('ZCOUNT', z, '-inf', after_zscore)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if bytes_after(redis.call('ZRANGE', z, mid, mid)[1], after_member) then
      hi = mid
    else
      lo = mid + 1
    end
  end
  pos = lo
end
local rows = redis.call('ZRANGE', z, pos, pos + limit - 1, 'WITHSCORES')
local first = 1
if #rows > 0 then
  first = place(z, d, m, mode, pos, rows[2])
  if not first then
    return {'stale', 0, 0, {}, 0}
  end
end
return {state, pos, redis.call('ZCARD', z), rows, first}
