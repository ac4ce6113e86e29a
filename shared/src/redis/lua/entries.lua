-- The rows of some players: for each player in ARGV (after the rank mode) who is on the
-- board, their 0-based rank, their place under the mode, and their entry.
-- Returns {state, size, {{player, rank0, place, member, zscore}, ...}}.
local z, h, m, d = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local mode = ARGV[1]

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, {}}
end
local out = {}
if #ARGV > 1 then
  local values = redis.call('HMGET', h, unpack(ARGV, 2))
  for i = 1, #values do
    if values[i] then
      local _, member, zscore = parse(values[i])
      local r = redis.call('ZRANK', z, member)
      if r then
        local p = place(z, d, m, mode, r, zscore)
        if not p then
          return {'stale', 0, {}}
        end
        out[#out + 1] = {ARGV[i + 1], r, p, member, zscore}
      end
    end
  end
end
return {state, redis.call('ZCARD', z), out}
