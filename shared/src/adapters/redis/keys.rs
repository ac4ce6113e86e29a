//! The Redis key names of a board. All share the `{<board>}` hash tag, so a board lives
//! in one Redis Cluster slot and every script touches one slot only.

use leaderboard_rules::ids::LeaderboardId;

/// The keys of one board, under the index's key prefix.
pub(crate) struct BoardKeys {
    /// Sorted set: zscore -> member (see [`leaderboard_rules::order`]).
    pub z: String,
    /// Hash: player -> `version:stamp|zscore|member` (the stamp: when the entry took its
    /// place, microseconds on the server's clock; see `lua/prelude.lua`).
    pub h: String,
    /// Marker hash: `state`, `lineage`, `size`, `gen`.
    pub m: String,
    /// Sorted set of the board's distinct zscores, for dense ranks.
    pub d: String,
    /// Hash of removed players' tombstones: player -> the removal's version.
    pub x: String,
    /// A rebuild's sorted set, hash and distinct zscores, swapped in when it finishes.
    pub tz: String,
    pub th: String,
    pub td: String,
    /// The top-window version.
    pub tv: String,
    /// Set while a repair request for the board is in flight (dedupes the requests).
    pub rq: String,
    /// The lease of the one rebuild allowed to work on the board.
    pub lease: String,
}

impl BoardKeys {
    pub fn new(prefix: &str, lb: &LeaderboardId) -> Self {
        Self::from_base(&format!("{prefix}lb:{{{lb}}}"))
    }

    /// The keys under `base` (`{prefix}lb:{<board>}`, as an `INDEXMOVED` error names it).
    pub fn from_base(base: &str) -> Self {
        Self {
            z: format!("{base}:z"),
            h: format!("{base}:h"),
            m: format!("{base}:m"),
            d: format!("{base}:d"),
            x: format!("{base}:x"),
            tz: format!("{base}:tz"),
            th: format!("{base}:th"),
            td: format!("{base}:td"),
            tv: format!("{base}:tv"),
            rq: format!("{base}:rq"),
            lease: format!("{base}:lease"),
        }
    }
}

/// The live-view keys of a board (see [`leaderboard_core::store::LiveViews`]), under its hash tag.
pub(crate) struct LiveKeys {
    /// Sorted set: view id -> watched until (epoch ms).
    pub watched: String,
    /// The view's last push (JSON).
    pub state: String,
    /// The view's push gate.
    pub gate: String,
}

impl LiveKeys {
    pub fn new(prefix: &str, lb: &LeaderboardId, view: &str) -> Self {
        let base = format!("{prefix}lb:{{{lb}}}:live");
        Self {
            watched: format!("{base}:w"),
            state: format!("{base}:v:{view}"),
            gate: format!("{base}:g:{view}"),
        }
    }
}

/// The seat hints of a tournament occurrence (see [`leaderboard_core::store::SeatHints`]), under
/// its board's hash tag.
pub(crate) struct SeatKeys {
    /// Seats handed out so far (the next is this number).
    pub counter: String,
    /// List of seats given back, taken first.
    pub given: String,
}

impl SeatKeys {
    pub fn new(prefix: &str, occ: &LeaderboardId) -> Self {
        let base = format!("{prefix}lb:{{{occ}}}:seats");
        Self {
            counter: format!("{base}:n"),
            given: format!("{base}:given"),
        }
    }
}

/// The registry of the boards with watched live views: a sorted set of
/// `{direction}:{board}` -> watched until (epoch ms), for the pushes a rename makes.
pub(crate) fn live_boards(prefix: &str) -> String {
    format!("{prefix}live:boards")
}

/// The key prefix of players' card copies (`{prefix}pf:{player}`, see `lua/prelude.lua`):
/// outside every board's hash tag, so a rename is one write however many boards show it.
pub(crate) fn card_prefix(prefix: &str) -> String {
    format!("{prefix}pf:")
}

/// The key of a rate-limit counter.
pub(crate) fn rate_counter(prefix: &str, key: &str) -> String {
    format!("{prefix}rl:{key}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_of_a_board_shares_its_hash_tag() {
        let lb = LeaderboardId::parse("g1:ranked").unwrap();
        let k = BoardKeys::new("t:", &lb);
        for key in [
            &k.z, &k.h, &k.m, &k.d, &k.x, &k.tz, &k.th, &k.td, &k.tv, &k.rq, &k.lease,
        ] {
            assert!(key.starts_with("t:lb:{g1:ranked}:"), "{key}");
        }
    }
}
