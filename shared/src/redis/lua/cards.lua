-- The card copies under KEYS (see `card_copy`): per key its 'version|card JSON', or
-- false for none.
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = card_copy(redis.call('GET', key))
end
return out
