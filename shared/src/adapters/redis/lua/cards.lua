-- The card copies under KEYS (see `card_copy`): per key its card, or false for none.
local out = redis.call('MGET', unpack(KEYS))
for i = 1, #out do
  out[i] = card_copy(out[i])
end
return out
