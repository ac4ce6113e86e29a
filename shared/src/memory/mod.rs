//! In-memory twins of the ports, for tests of the use cases without servers (and for a
//! handler test per function): [`MemoryStore`] honours the [`crate::store::ScoreStore`]
//! contracts (create-if-absent, the conditional commit of a receipt with its standing,
//! rank-ordered reads, capped counts, shard pages) and keeps the table's stream;
//! [`MemoryIndex`] honours the [`crate::store::RankIndex`] ones (the marker checked by
//! every read, version-checked applies, resumable rebuilds, the top window's version).
//! Both can be taken down to play an outage. The end-to-end suite runs the same use
//! cases over DynamoDB and Redis.

mod index;
mod store;

use std::time::Duration;

pub use index::MemoryIndex;
pub use store::{MEMORY_SHARDS, MemoryStore};

use crate::error::{IndexError, StoreError};

/// The error an unreachable Redis gives (a timeout).
fn outage() -> IndexError {
    IndexError::Timeout(Duration::ZERO)
}

/// The error an unreachable DynamoDB gives.
fn store_outage() -> StoreError {
    StoreError::sdk(
        "memory",
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "the store is down"),
    )
}
