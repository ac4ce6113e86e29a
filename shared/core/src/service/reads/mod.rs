//! Ranked reads: a player's rank with neighbours, the top of a board, a player's place
//! among friends, and the whole board page by page. Each is one Redis round trip (plus
//! the board definition, cached per container). Pages walk the board with cursors both
//! ways and from any rank (`pages`, whose doc states what a walk guarantees under
//! writes); `entries` answers the rows of a list of players.
//!
//! When Redis cannot answer (down, slow, breaker open) or does not hold the board
//! completely (wiped, rebuilding), the same read is answered from DynamoDB's
//! rank-ordered index, flagged `degraded: true`, `source: "dynamodb"`. Closed windows
//! whose Redis keys have expired are read from DynamoDB as a matter of course (not
//! degraded). If DynamoDB fails too, the container's last good answer to the same read
//! is served with `stale_ms`; with none, the error (503 with Retry-After).
//!
//! One file per read (`rank`, `top`, `pages`, `entries`, `friends`); around them the replies
//! (`reply`), the names on their rows (`names`), their parameters (`params`), the reply caches (`hot_reads`), the bounded
//! DynamoDB counts (`estimate`) and the fallbacks (`fallback`).

mod entries;
mod estimate;
mod fallback;
mod friends;
mod hot_reads;
pub(crate) mod names;
mod pages;
mod params;
mod rank;
mod reply;
mod store_pages;
mod top;

pub use entries::{MAX_PLAYERS, entries, parse_players};
pub use estimate::COUNT_CAP;
pub use fallback::{LAST_KNOWN_TTL, LastKnown};
pub use friends::friends_rank;
pub use hot_reads::HotReads;
pub use pages::{PageStart, ranks, ranks_from};
pub use params::{
    DEFAULT_K, DEFAULT_N, DEFAULT_PAGE, MAX_FROM_RANK, MAX_K, MAX_N, MAX_PAGE, admit, parse_k,
    parse_limit, parse_mode, parse_n, parse_start,
};
pub use rank::rank;
pub use reply::{
    Answer, EntriesReply, Entry, FriendsReply, PageReply, Provenance, RankReply, Rows, Source,
    TopReply,
};
pub(crate) use top::best_from_store;
pub use top::top;
