//! The ports the use cases depend on: [`ScoreStore`] (the source of truth), [`RankIndex`]
//! (the rebuildable ranking index) and [`FriendsSource`] (the social graph).
//!
//! Adapters: `leaderboard::adapters::dynamodb::DynamoScoreStore`, `leaderboard::adapters::redis::RedisRankIndex`,
//! `leaderboard::adapters::social::HttpFriendsSource`.
//!
//! One port per file: `score_store` (with `board_store`, its boards and families), `moderation` (bans, the audit trail), `rank_index`,
//! `profile` (players' profiles), `reward` (players' rewards and their events), `rate_counter`, `row` (a player's row and the writes of it), `receipts` (the receipts a row keeps), `repair` (the repair queue), `seal` (sealed results, history, the
//! window-closed event), `live` (live views' state and where pushes go), `mapping` (event sources' schema mappings), `dead_letter` (records
//! stream ingest gives up on), `stream` (stream batches and the stream read again),
//! `tournament` (tournaments, their seats and members, and the seat hints), `export` (exports'
//! progress and their bucket), `jobs` (the queue of the seal function's long jobs),
//! `friends`.

mod board_store;
mod cache_plane;
mod dead_letter;
mod error;
mod events;
mod export;
mod friends;
mod held;
mod index_entry;
mod index_reads;
mod jobs;
mod live;
mod mapping;
mod moderation;
mod profile;
mod rank_index;
mod rate_counter;
mod receipts;
mod repair;
mod reward;
mod row;
mod score_store;
mod seal;
mod stream;
mod tournament;

pub use board_store::{BoardPage, BoardStore, FamilyPage};
pub use cache_plane::{
    CacheEvent, CachePlane, NodeGroup, NodeMember, PlaneError, ReplicationGroup,
};
pub use dead_letter::{DeadLetter, DeadLetterCount, DeadLetters};
pub use error::{FriendsError, IndexError, QueueError, StoreError};
pub use events::{
    BoardResetDone, EventPublisher, LeagueSettled, SettledMember, TournamentStarted, Turn,
    WindowClosed, WindowTurn,
};
pub use export::{ExportFiles, ExportJob, ExportStore, ExportTurn};
pub use friends::FriendsSource;
pub use held::{
    HeldFilter, HeldPage, HeldResult, HeldStore, MATCH_SPAN_MS, QueueChange, queue_key,
};
pub use index_entry::{EntryKind, IndexEntry};
pub use index_reads::{
    Around, PageAt, PlayerRow, PlayerRows, RowCards, RowMetadata, Slice, TOP_WINDOW, TopWindow,
};
pub use jobs::{JobQueue, JobTurn, ResetTurn};
pub use live::{BroadcastError, Broadcaster, Claim, LiveViews};
pub use mapping::MappingStore;
pub use moderation::{AuditAction, AuditPage, AuditRecord, Ban, BanPage, ModerationStore};
pub use profile::{NamePage, ProfileStore, StoredProfile, VersionedCard, entry_player, name_entry};
pub use rank_index::{
    BatchApplied, CardCopies, Health, IndexReads, IndexUpkeep, IndexWrites, Place, Placement,
    REPAIR_CLAIM, RankIndex, RebuildStart,
};
pub use rate_counter::RateCounter;
pub use receipts::{INLINE_RECEIPTS, Kept, KeptReceipt};
pub use repair::{RebuildNeeded, RepairQueue};
pub use reward::{
    ClaimOutcome, DecidedReward, Reward, RewardClaimed, RewardStatus, RewardStore, RewardsDecided,
};
pub use row::{
    AttemptCount, Buckets, Commit, CommitOutcome, Receipt, Removal, Review, Roll, Row, RowAt,
};
pub use score_store::{
    Checkpoint, Consistency, Count, IngestStore, RankSketch, RankedReads, ReadStore, RebuildStore,
    ScoreStore, SketchStore, StandingStore,
};
pub use seal::{
    HistoryQuery, HistoryRow, LeagueRow, Placing, Results, SealState, SealStore, SealedWindow,
};
pub use stream::{StreamBatch, StreamRange, StreamSource};
pub use tournament::{SeatHints, SeatTaken, TournamentPage, TournamentStore};
