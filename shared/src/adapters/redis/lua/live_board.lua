-- A board with a watched view, kept in the registry of watched boards (member
-- `{direction}:{board}`) until the last of its views' watches ends; members whose
-- watches ended are dropped on the way, so the registry holds the boards watched now.
local boards = KEYS[1]
local board, until_ms, now_ms = ARGV[1], ARGV[2], ARGV[3]

redis.call('ZREMRANGEBYSCORE', boards, '-inf', '(' .. now_ms)
redis.call('ZADD', boards, 'GT', until_ms, board)
return 1
