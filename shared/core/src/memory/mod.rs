//! In-memory twins of the ports, for tests of the use cases without servers (and for a
//! handler test per function): [`MemoryStore`] honours the [`crate::store::ScoreStore`]
//! contracts (create-if-absent, the conditional commit of a receipt with its standing,
//! rank-ordered reads, capped counts, shard pages) and keeps the table's stream;
//! [`MemoryIndex`] honours the [`crate::store::RankIndex`] ones (the marker checked by
//! every read, version-checked applies, resumable rebuilds, the top window's version).
//! Both can be taken down to play an outage. The end-to-end suite runs the same use
//! cases over DynamoDB and Redis.

mod board;
mod dead_letters;
mod export;
mod held;
mod index;
mod live;
mod mappings;
mod moderation;
mod plane;
mod profiles;
mod ranked;
mod rewards;
mod seal;
mod standings;
mod store;
mod stream;
mod tournaments;
mod upkeep;

use std::time::Duration;

pub use dead_letters::MemoryDeadLetters;
pub use export::{MemoryFiles, MemoryJobQueue};
pub use index::MemoryIndex;
pub use live::MemoryBroadcasts;
pub use plane::MemoryPlane;
pub use seal::MemoryEvents;
pub use store::{MEMORY_SHARDS, MemoryStore};

use crate::service::boards::{self, CreateBoard};
use crate::service::ingest;
use crate::service::write::request::SubmitScore;
use crate::service::{Context, Settings};
use crate::store::{IndexError, StoreError};
use leaderboard_rules::board::Policy;
use leaderboard_rules::decimal::Amount;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::score::Score;

/// A context over fresh twins with every per-container cache off (board definitions,
/// replies, cards), so each call sees the ports as they are.
pub fn context() -> Context<MemoryStore, MemoryIndex> {
    let settings = Settings {
        board_cache_ttl: Duration::ZERO,
        read_cache_ttl: Duration::ZERO,
        card_cache_ttl: Duration::ZERO,
        ..Settings::default()
    };
    Context::new(MemoryStore::default(), MemoryIndex::default(), settings)
}

/// The error an unreachable Redis gives (a timeout).
fn outage() -> IndexError {
    IndexError::Timeout(Duration::ZERO)
}

/// The error an unreachable DynamoDB gives.
fn store_outage() -> StoreError {
    StoreError::call(
        "memory",
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "the store is down"),
    )
}

/// Creates the board `lb` with `policy` in `ctx` and writes each (player, score) as one
/// match (`m-{player}`): the setup of a handler test.
pub async fn seed(
    ctx: &Context<MemoryStore, MemoryIndex>,
    lb: &str,
    policy: Policy,
    scores: &[(&str, i64)],
) -> LeaderboardId {
    let lb = LeaderboardId::parse(lb).expect("a valid board id");
    let create = CreateBoard {
        dense_ranks: true,
        ..CreateBoard::new(lb.clone(), policy)
    };
    boards::create_board(&ctx.store, &ctx.index, create)
        .await
        .expect("the board is created");
    for (player, score) in scores {
        let req = SubmitScore::plain(
            lb.clone(),
            PlayerId::parse(player).expect("a valid player id"),
            MatchId::parse(&format!("m-{player}")).expect("a valid match id"),
            Amount::whole(
                "score",
                Score::new("score", *score).expect("a score in range"),
            ),
        );
        ingest::submit_score(ctx, req)
            .await
            .expect("the score is written");
    }
    lb
}
