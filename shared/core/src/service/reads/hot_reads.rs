//! The reads' reply caches: one short-TTL cache per read kind (hot-spot protection), in
//! front of the last-known fallback.

use std::future::Future;
use std::time::Duration;

use super::fallback::LastKnown;
use super::reply::{
    Answer, EntriesReply, FriendsReply, PageReply, Provenance, RankReply, Source, TopReply,
};
use crate::service::ServiceError;
use crate::service::boards::BoardCache;
use crate::service::hot::{ReadCache, TopWindows};
use leaderboard_rules::ids::LeaderboardId;

/// The hot-spot protection of the reads: one short-TTL reply cache per read kind and
/// the top windows of the boards this container serves (see [`crate::service::hot`]).
pub struct HotReads {
    pub(super) rank: ReadCache<RankReply>,
    pub(super) top: ReadCache<TopReply>,
    pub(super) friends: ReadCache<FriendsReply>,
    pub(super) pages: ReadCache<PageReply>,
    pub(super) entries: ReadCache<EntriesReply>,
    pub windows: TopWindows,
}

impl HotReads {
    pub fn new(ttl: Duration, card_ttl: Duration) -> Self {
        Self {
            rank: ReadCache::new(ttl),
            top: ReadCache::new(ttl),
            friends: ReadCache::new(ttl),
            pages: ReadCache::new(ttl),
            entries: ReadCache::new(ttl),
            windows: TopWindows::new(card_ttl),
        }
    }
}

/// Serves a read through its reply cache (unless `bypass`), falling back to the last
/// known answer when the backends fail. A reply served from the cache says
/// `source: "cache"` and keeps the `as_of` of the read that produced it. Each answer is
/// counted for the board's game ([`count`]).
pub(super) async fn cached<T, F, Fut>(
    (cache, last_known): (&ReadCache<T>, &LastKnown),
    (boards, lb): (&BoardCache, &LeaderboardId),
    key: String,
    bypass: bool,
    load: F,
) -> Result<T, ServiceError>
where
    T: Answer,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    // Boxed: the load is a deep state machine of its own, and nesting it inline makes
    // the handlers' futures too deep for the compiler's layout queries in release.
    let settle = async |key: String| last_known.settle(key, Box::pin(load()).await);
    let mut reply = match bypass {
        true => settle(key).await?,
        false => {
            let (mut reply, hit) = cache.get_or_load(key.clone(), || settle(key)).await?;
            if hit {
                reply.provenance().source = Source::Cache;
            }
            reply
        }
    };
    count(boards.game_of(lb).as_deref(), reply.provenance());
    Ok(reply)
}

/// Counts an answered read of a board of `game` (the console's overview): `Reads`, and
/// `ReadsDegraded` when Redis could not answer it (from DynamoDB, or the last known
/// answer). A board of no game (one defined on its own) is not counted by game.
fn count(game: Option<&str>, meta: &Provenance) {
    let Some(game) = game else { return };
    crate::service::metrics::tally_game("Reads", game, 1);
    if meta.degraded {
        crate::service::metrics::tally_game("ReadsDegraded", game, 1);
    }
}
