-- Marks at `marks` evenly spaced ranks of the board (fewer on a smaller board), unless
-- it holds no more than `min_size` entries (then only its size comes back).
-- Returns {state, size, 0-based rank of each mark, the entry at each with its zscore}.
local z, h, m = KEYS[1], KEYS[2], KEYS[3]
local marks, min_size = tonumber(ARGV[1]), tonumber(ARGV[2])

local state = checked(m, z, h)
if state ~= 'ok' then
  return {state, 0, {}, {}}
end
local n = redis.call('ZCARD', z)
if n <= min_size then
  return {state, n, {}, {}}
end
marks = math.min(marks, n)
local ranks, entries = {}, {}
for i = 0, marks - 1 do
  local r = math.floor(i * n / marks)
  local e = redis.call('ZRANGE', z, r, r, 'WITHSCORES')
  ranks[#ranks + 1] = r
  entries[#entries + 1] = e[1]
  entries[#entries + 1] = e[2]
end
return {state, n, ranks, entries}
