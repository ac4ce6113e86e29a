-- Keeps a card copy unless the one held (on this replication history) is as new or
-- newer: from a profile's write, the stream, or a reader that found none and read
-- DynamoDB. Returns 1 when kept, 0 when the copy held won.
local key = KEYS[1]
local version, card, ttl = ARGV[1], ARGV[2], ARGV[3]

-- A copy this code cannot read (another format) counts as none, like one from another
-- history: readers would never take it, so it must never stop a newer one.
local held = card_copy(redis.call('GET', key))
local held_version = held and tonumber(string.match(held, '^(%d+)\31'))
if held_version and held_version >= tonumber(version) then
  return 0
end
redis.call('SET', key, lineage() .. '|' .. version .. '\31' .. card, 'EX', ttl)
return 1
