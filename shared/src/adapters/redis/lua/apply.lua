-- One change, from the write-through (a standing) or an operator (a removal): applied
-- to the live keys if its version is newer and, while a rebuild runs, to the rebuild's
-- keys too; the top-window version moves on when the change lands inside the window.
-- Returns {applied, state} or, with want_rank and the player still on the board,
-- {applied, state, 0-based rank, size}.
local z, h, m, tz, th, tv, d, td, x = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9]
local player, version, zscore, member = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
local want_rank, expire_at, window = ARGV[5], ARGV[6], tonumber(ARGV[7])

local state, keeps = checked(m, z, h)
local dk, tdk = distinct_keys(keeps, d, td)
local applied, current, touched, delta = put(z, h, dk, x, player, version, zscore, member, window_of(z, window))
if delta ~= 0 and state == 'ok' then
  redis.call('HINCRBY', m, 'size', delta)
end
if state == 'rebuilding' then
  put(tz, th, tdk, x, player, version, zscore, member, false)
end
if touched then
  bump(tv, expire_at)
end
expire_board(z, h, d, m, expire_at, applied == 1, state, x)
if want_rank == '0' or not current then
  return {applied, state}
end
return {applied, state, redis.call('ZRANK', z, current), redis.call('ZCARD', z)}
