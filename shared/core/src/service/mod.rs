//! Use cases, one module each: [`boards`] (define and look up boards), [`ingest`]
//! (idempotent score submission with write-through), [`moderation`] (removals, bans,
//! erasure, the audit trail), [`profiles`] (players' names and attributes), [`scores`] (one result fanned out
//! to every window), [`reads`] (rank, top, friends, pages), [`hot`] (the reads' reply
//! cache, top windows and rate limits), [`projector`] (stream changes into the rank
//! index), [`rebuild`] (the index from DynamoDB) and [`repair`] (the index repairing
//! itself: boards reported not ready, stream batches given up on) and [`seal`] (a closed
//! window's results, players' history), [`stream_ingest`] (match results from Kafka
//! and Kinesis records, through the same ingest) and [`mappings`] (the event sources'
//! schema mappings it reads them with), [`live`] (live views: snapshots and the publisher),
//! [`tournaments`] (events: joins into cohorts, results that count attempts),
//! [`export`] (a board's standings as a file in the stack's bucket).
//! They are generic over the ports in
//! [`crate::store`]; [`Context`] carries the adapters a function built at cold start
//! (see `leaderboard::wiring`).

pub mod boards;
pub mod cache_plane;
mod error;
pub mod export;
pub mod hot;
pub mod ingest;
pub mod integrity;
pub mod live;
pub mod mappings;
pub mod metrics;
pub mod moderation;
mod once;
pub mod operator;
pub mod profiles;
pub mod projector;
pub mod reads;
pub mod rebuild;
pub mod repair;
pub mod rewards;
pub mod rolling;
pub mod scores;
pub mod seal;
pub mod sketch;
pub mod stream_ingest;
pub mod tournaments;
pub mod ttl_cache;
pub mod write;

pub use error::{JoinRefusal, ServiceError};

use std::hash::{BuildHasher, RandomState};
use std::time::Duration;

use boards::{BoardCache, FamilyCache};

/// Tunables of the use cases (see `leaderboard::wiring::config` for their variables and
/// `leaderboard::wiring::settings` for the mapping).
#[derive(Debug, Clone)]
pub struct Settings {
    /// How long a receipt (and so a `match_id` retry) is kept.
    pub receipt_ttl: Duration,
    /// How long a container trusts a cached board or family definition.
    pub board_cache_ttl: Duration,
    /// How long a closed window's keys stay in Redis.
    pub redis_retention: Duration,
    /// How far in the future an `event_ts` may be.
    pub max_future_skew: Duration,
    /// How long a container reuses a read reply (zero: never).
    pub read_cache_ttl: Duration,
    /// How long a container reuses the cards of a top window it holds (zero: never).
    pub card_cache_ttl: Duration,
    /// Read limits per player and per IP.
    pub rate_limits: hot::RateLimits,
    /// Whether ingest applies to the index in the request (else the stream alone does).
    pub write_through: bool,
    /// Whether players may set their own profile's card (`PUT /me/profile`).
    pub players_set_profiles: bool,
    /// Whether reads put names on their rows (a game that draws names from its own
    /// service turns it off and saves the card reads; see `docs/profiles.md`).
    pub names_on_rows: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            receipt_ttl: Duration::from_secs(30 * 86_400),
            board_cache_ttl: Duration::from_secs(1),
            redis_retention: Duration::from_secs(7 * 86_400),
            max_future_skew: Duration::from_secs(60),
            read_cache_ttl: Duration::from_millis(250),
            card_cache_ttl: Duration::from_millis(250),
            rate_limits: hot::RateLimits::default(),
            write_through: true,
            players_set_profiles: false,
            names_on_rows: true,
        }
    }
}

impl Settings {
    /// Epoch second at which a board's Redis keys expire ([`index_expire_at`]).
    pub fn index_expire_at(&self, board: &leaderboard_rules::board::Board) -> Option<i64> {
        index_expire_at(board, self.redis_retention)
    }
}

/// Epoch second at which a board's Redis keys expire: a time window's close plus
/// `retention`; `None` for boards that never close by time.
pub fn index_expire_at(
    board: &leaderboard_rules::board::Board,
    retention: Duration,
) -> Option<i64> {
    board
        .closes_at()
        .map(|at| (at + retention.as_millis() as i64) / 1000)
}

/// The instant the write path takes as now where time decides the outcome (which
/// occurrence a join or result falls in, whether a window still takes results): the
/// system's, unless a replay or a test sets one ([`Clock::set`]), e.g. to play a past
/// week of a league. Receipts and leases keep the system's time.
#[derive(Debug, Default, Clone)]
pub struct Clock(std::sync::Arc<std::sync::atomic::AtomicI64>);

impl Clock {
    /// Now, ms since the epoch.
    pub fn now(&self) -> i64 {
        match self.0.load(std::sync::atomic::Ordering::Relaxed) {
            0 => leaderboard_rules::time::now_ms(),
            at => at,
        }
    }

    /// Sets the instant (`None`: the system's again).
    pub fn set(&self, at: Option<i64>) {
        (self.0).store(at.unwrap_or(0), std::sync::atomic::Ordering::Relaxed);
    }
}

/// What the ingest and read use cases work with.
pub struct Context<S, I> {
    pub store: S,
    pub index: I,
    pub boards: BoardCache,
    pub families: FamilyCache,
    pub settings: Settings,
    /// The last good answer of each read, for when Redis and DynamoDB both fail.
    pub last_known: reads::LastKnown,
    /// Short-TTL reply caches and top windows (hot-spot protection).
    pub hot: reads::HotReads,
    /// Where boards whose index is not ready are reported for repair.
    pub repairs: repair::Reporter,
    /// Tournament definitions and cohorts' member lists, briefly cached.
    pub tournaments: tournaments::TournamentCache,
    /// Now, for the write path's decisions of time.
    pub clock: Clock,
}

impl<S, I> Context<S, I> {
    pub fn new(store: S, index: I, settings: Settings) -> Self {
        Self {
            boards: BoardCache::new(settings.board_cache_ttl),
            families: FamilyCache::new(settings.board_cache_ttl),
            store,
            index,
            last_known: reads::LastKnown::default(),
            hot: reads::HotReads::new(settings.read_cache_ttl, settings.card_cache_ttl),
            repairs: repair::Reporter::default(),
            tournaments: tournaments::TournamentCache::new(settings.board_cache_ttl),
            clock: Clock::default(),
            settings,
        }
    }

    /// Reports boards found not ready to `repairs` (see [`repair::Reporter`]).
    pub fn with_repairs(mut self, repairs: repair::Reporter) -> Self {
        self.repairs = repairs;
        self
    }
}

/// An id no other run (or invocation) uses: the time and a random part.
pub(crate) fn run_id() -> String {
    let now = leaderboard_rules::time::now_ms();
    format!("{now}-{:x}", RandomState::new().hash_one(now))
}

/// Jittered exponential backoff: up to 2 ms, 4 ms, ... capped at 64 ms.
pub(crate) fn backoff(attempt: u32) -> Duration {
    let cap = 2_u64 << attempt.min(5);
    let jitter = RandomState::new().hash_one(attempt) % (cap * 1000);
    Duration::from_micros(jitter)
}
