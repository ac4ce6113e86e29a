-- The board's state, checked (see `checked` in the prelude).
local z, h, m = KEYS[1], KEYS[2], KEYS[3]

return (checked(m, z, h))
