-- Many changes (standings, removals, erasures) of one board, from the stream, in stream
-- order (a player repeated in the batch sees its own earlier change): APPLY for each,
-- with the marker check, the window bump and the expiries done once per call.
-- ARGV: window, expire_at, then (player, version, zscore, member) per change.
-- Returns {state, {applied (1/0) per change}}.
local z, h, m, tz, th, tv, d, td, x = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local window, expire_at = tonumber(ARGV[1]), ARGV[2]

local state, keeps = checked(m, z, h)
local dk, tdk = distinct_keys(keeps, d, td)
local rebuilding = state == 'rebuilding'
local track, bumped, any, added = window_of(z, window), false, false, 0
local out = {}
for i = 3, #ARGV, 4 do
  local player, version, zscore, member = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local a, _, t, delta = put(z, h, dk, x, player, version, zscore, member, track)
  if rebuilding then
    put(tz, th, tdk, x, player, version, zscore, member, false)
  end
  if t then
    track, bumped = false, true
  end
  added = added + delta
  any = any or a == 1
  out[#out + 1] = a
end
if added ~= 0 and state == 'ok' then
  redis.call('HINCRBY', m, 'size', added)
end
if bumped then
  bump(tv, expire_at)
end
expire_board(z, h, d, m, expire_at, any, state, x)
return {state, out}
