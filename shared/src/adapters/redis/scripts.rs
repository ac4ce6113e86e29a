//! The rank index's Lua scripts, one `.lua` file each under `lua/`, every one prefixed
//! with `lua/prelude.lua` (the shared helpers: the marker check against the node's
//! replication history, the versioned put, the top-window bump). Each script opens with
//! named locals for its keys and arguments; one type per script in `calls` builds them
//! in the same order.

use redis::Script;

/// A script file with the prelude in front.
macro_rules! with_prelude {
    ($file:literal) => {
        Script::new(concat!(
            include_str!("lua/prelude.lua"),
            include_str!(concat!("lua/", $file))
        ))
    };
}

/// Every script, hashed once per container.
pub(crate) struct Scripts {
    pub apply: Script,
    pub apply_many: Script,
    pub around: Script,
    pub page: Script,
    pub top: Script,
    pub keys_of: Script,
    pub entries: Script,
    pub top_window: Script,
    pub cards: Script,
    pub card_put: Script,
    pub sketch: Script,
    pub health: Script,
    pub init: Script,
    pub mark_stale: Script,
    pub settle: Script,
    pub begin: Script,
    pub load: Script,
    pub finish: Script,
    pub lease: Script,
    pub release: Script,
    pub hit: Script,
    pub seat: Script,
    pub seat_back: Script,
    pub live_watch: Script,
    pub live_watched: Script,
    pub live_board: Script,
    pub live_claim: Script,
}

impl Scripts {
    pub fn new() -> Self {
        Self {
            apply: with_prelude!("apply.lua"),
            apply_many: with_prelude!("apply_many.lua"),
            around: with_prelude!("around.lua"),
            page: with_prelude!("page.lua"),
            top: with_prelude!("top.lua"),
            keys_of: with_prelude!("keys_of.lua"),
            entries: with_prelude!("entries.lua"),
            top_window: with_prelude!("top_window.lua"),
            cards: with_prelude!("cards.lua"),
            card_put: with_prelude!("card_put.lua"),
            sketch: with_prelude!("sketch.lua"),
            health: with_prelude!("health.lua"),
            init: with_prelude!("init.lua"),
            mark_stale: with_prelude!("mark_stale.lua"),
            settle: with_prelude!("settle.lua"),
            begin: with_prelude!("begin.lua"),
            load: with_prelude!("load.lua"),
            finish: with_prelude!("finish.lua"),
            lease: Script::new(include_str!("lua/lease.lua")),
            release: Script::new(include_str!("lua/release.lua")),
            hit: Script::new(include_str!("lua/hit.lua")),
            seat: Script::new(include_str!("lua/seat.lua")),
            seat_back: Script::new(include_str!("lua/seat_back.lua")),
            live_watch: Script::new(include_str!("lua/live_watch.lua")),
            live_watched: Script::new(include_str!("lua/live_watched.lua")),
            live_board: Script::new(include_str!("lua/live_board.lua")),
            live_claim: Script::new(include_str!("lua/live_claim.lua")),
        }
    }
}
