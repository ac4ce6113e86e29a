-- Keeps a card copy unless the one held (on this replication history) is as new or
-- newer: from a profile's write, the stream, or a reader that found none and read
-- DynamoDB. Returns 1 when kept, 0 when the copy held won.
local key = KEYS[1]
local version, card, ttl = ARGV[1], ARGV[2], ARGV[3]

local held = card_copy(redis.call('GET', key))
if held and tonumber(string.match(held, '^(%d+)|')) >= tonumber(version) then
  return 0
end
redis.call('SET', key, lineage() .. '|' .. version .. '|' .. card, 'EX', ttl)
return 1
