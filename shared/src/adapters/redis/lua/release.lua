-- Gives a rebuild's lease back, if `owner` still holds it. Returns 1 when released.
local lease = KEYS[1]
local owner = ARGV[1]

if redis.call('GET', lease) ~= owner then
  return 0
end
return redis.call('DEL', lease)
