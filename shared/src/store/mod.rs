//! The ports the use cases depend on: [`ScoreStore`] (the source of truth), [`RankIndex`]
//! (the rebuildable ranking index) and [`FriendsSource`] (the social graph).
//!
//! Adapters: [`crate::dynamodb::DynamoScoreStore`], [`crate::redis::RedisRankIndex`],
//! [`crate::social::HttpFriendsSource`].
//!
//! One port per file: `score_store`, `rank_index`, `rate_counter`, `repair` (the repair
//! queue), `stream` (stream batches and the stream read again), `friends`.

mod friends;
mod rank_index;
mod rate_counter;
mod repair;
mod score_store;
mod stream;

pub use friends::FriendsSource;
pub use rank_index::{
    Around, BatchApplied, Health, IndexEntry, Placement, REPAIR_CLAIM, RankIndex, Slice,
    TOP_WINDOW, TopWindow,
};
pub use rate_counter::RateCounter;
pub use repair::{RebuildNeeded, RepairQueue};
pub use score_store::{
    BoardPage, BoardStore, Checkpoint, Commit, CommitOutcome, Count, RankSketch, RankedReads,
    RebuildStore, Receipt, ScoreStore, SketchStore, StandingStore,
};
pub use stream::{StreamBatch, StreamRange, StreamSource};
