//! What a use case fails with: [`ServiceError`], the rules' refusals and the backends'
//! faults together, each with the stable code clients see (`http` maps it to a status).

use thiserror::Error;

use crate::store::{FriendsError, IndexError, QueueError, StoreError};
use leaderboard_rules::board::BoardStatus;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};

/// What a use case (ingest, a read, a board operation) can fail with.
#[derive(Debug, Error)]
pub enum ServiceError {
    #[error(transparent)]
    Domain(#[from] DomainError),
    #[error("leaderboard {0} does not exist")]
    BoardNotFound(LeaderboardId),
    #[error("leaderboard {0} already exists with other settings")]
    BoardConflict(LeaderboardId),
    #[error("leaderboard {lb} is {status} and accepts no writes")]
    BoardNotActive {
        lb: LeaderboardId,
        status: BoardStatus,
    },
    #[error("the window of leaderboard {lb} closed at {closed_at}")]
    WindowClosed {
        lb: LeaderboardId,
        closed_at: String,
    },
    #[error("event_ts is outside the window of leaderboard {0}")]
    EventOutsideWindow(LeaderboardId),
    /// A well-formed region the family does not have: the family's settings, not the
    /// request's shape, refuse it (422, like a score outside a board's range).
    #[error("region {region} is not one of the family {game}/{mode}'s regions {regions:?}")]
    UnknownRegion {
        game: String,
        mode: String,
        region: String,
        regions: Vec<String>,
    },
    #[error("no board family for game {game} and mode {mode}")]
    FamilyNotFound { game: String, mode: String },
    #[error("the board family {game}/{mode} already exists with other settings")]
    FamilyConflict { game: String, mode: String },
    #[error("leaderboard {lb} cannot go from {from} to {to}")]
    InvalidTransition {
        lb: LeaderboardId,
        from: BoardStatus,
        to: BoardStatus,
    },
    #[error("player {player} has no score on leaderboard {lb}")]
    NotRanked { lb: LeaderboardId, player: PlayerId },
    /// The same idempotency key came back with a different score.
    #[error("match {0} was already recorded for this player with a different score")]
    IdempotencyConflict(MatchId),
    /// A held result an operator rejected: it never counts (docs/integrity.md).
    #[error("match {0} was held for review and rejected")]
    ResultRejected(MatchId),
    /// No held result with this id is waiting (decided already the other way, or
    /// never held).
    #[error("no held result {0} is waiting for review")]
    HeldNotFound(String),
    /// No export with this id was asked for on the board.
    #[error("no export {0} of this leaderboard")]
    ExportNotFound(String),
    /// An approval of a held result whose window was sealed since: its sealed results
    /// and history would not show it, so it waits (or is rejected).
    #[error(
        "the window of leaderboard {0} was sealed since the result was held; it can be rejected, not approved"
    )]
    HeldWindowSealed(LeaderboardId),
    /// The held result was already decided the other way.
    #[error("held result {id} was already {decided}")]
    AlreadyDecided { id: String, decided: &'static str },
    /// Optimistic concurrency gave up after its retry budget; nothing was written.
    #[error("too many concurrent writes for this player, retry shortly")]
    Contention,
    /// The player is banned from the game the board belongs to.
    #[error("player {player} is banned from game {game}")]
    PlayerBanned { game: String, player: PlayerId },
    /// No ban of the player in the game.
    #[error("player {player} is not banned from game {game}")]
    NotBanned { game: String, player: PlayerId },
    /// The board's window has no sealed results (yet, or ever: not a window board).
    #[error("the results of leaderboard {0} are not sealed")]
    NotSealed(LeaderboardId),
    /// A seal was asked for a board that cannot be sealed now.
    #[error("leaderboard {lb} cannot be sealed: {why}")]
    NotSealable {
        lb: LeaderboardId,
        why: &'static str,
    },
    /// The board is being reset: from the reset's fence until it is done, results wait
    /// (a retry then lands on the emptied board; docs/operations.md).
    #[error("leaderboard {lb} is being reset; retry in {retry_after_s} s")]
    BoardResetting {
        lb: LeaderboardId,
        retry_after_s: u64,
    },
    /// A reset was asked for a board that cannot be reset.
    #[error("leaderboard {lb} cannot be reset: {why}")]
    NotResettable {
        lb: LeaderboardId,
        why: &'static str,
    },
    /// The player has no reward with this id (never earned, erased, or long expired).
    #[error("no reward {0} for this player")]
    RewardNotFound(String),
    /// The reward expired unclaimed.
    #[error("reward {id} expired unclaimed at {expired_at}")]
    RewardExpired { id: String, expired_at: String },
    /// No schema mapping is stored for the event source (or not that version).
    #[error("no mapping is stored for source {0}")]
    MappingNotFound(String),
    /// The mapping changed since the version the caller expected.
    #[error("source {name} is at mapping version {current}, not {expected}")]
    MappingConflict {
        name: String,
        current: u64,
        expected: u64,
    },
    /// A player asked for another player's live neighbourhood.
    #[error("a live neighbourhood is only for its own player; {player} is not the caller")]
    NotYourView { player: PlayerId },
    /// A player set their own profile where the operator lets only the game's servers.
    #[error("profiles are set by the game's servers only on this deployment")]
    ProfilesServerOnly,
    /// The caller made too many reads in the current window.
    #[error("too many reads; retry in {retry_after_s} s")]
    RateLimited { retry_after_s: u64 },
    /// Served from DynamoDB, a rank past the count cap needs the board's rank sketch,
    /// and the board has none yet (it is taken every few minutes for big boards).
    #[error("the rank on leaderboard {0} cannot be worked out while its rank index is unavailable")]
    RankUnavailable(LeaderboardId),
    /// A closed window that keeps no rank order in DynamoDB (`Board::rank_index`), read
    /// after Redis let its keys go: its final standings are its sealed results.
    #[error(
        "leaderboard {0} closed and its live ranks expired; its final standings are at /leaderboards/{0}/results and in each player's history"
    )]
    WindowExpired(LeaderboardId),
    #[error("tournament {0} does not exist")]
    TournamentNotFound(String),
    #[error("tournament {0} already exists with another definition")]
    TournamentConflict(String),
    /// A join the occurrence does not take now (full, not started, ended, a ban).
    #[error("tournament {tournament}: {refusal}")]
    JoinRefused {
        tournament: String,
        refusal: JoinRefusal,
    },
    /// A result (or cohort read) of a player who has not joined the occurrence.
    #[error("player {player} has not joined the current occurrence of tournament {tournament}")]
    NotJoined {
        tournament: String,
        player: PlayerId,
    },
    #[error(
        "player {player} has used all {max} attempts in this occurrence of tournament {tournament}"
    )]
    AttemptsExhausted {
        tournament: String,
        player: PlayerId,
        max: u32,
    },
    /// A league's read or dry run of a tournament without a league.
    #[error("tournament {0} has no league")]
    NoLeague(String),
    /// A tournament without cohorts was asked for a player's cohort.
    #[error("tournament {0} has no cohorts; its occurrence's board has every player")]
    NoCohorts(String),
    /// A result posted straight to a tournament's board, around the attempt count.
    #[error(
        "leaderboard {lb} belongs to tournament {tournament}; post results to /tournaments/{tournament}/players/{{p}}/score"
    )]
    TournamentBoard {
        lb: LeaderboardId,
        tournament: String,
    },
    #[error("the score store is unavailable")]
    Store(#[from] StoreError),
    #[error("the rank index is unavailable")]
    Index(#[from] IndexError),
    #[error("the friends source is unavailable")]
    Friends(#[from] FriendsError),
    /// Stream records that can never apply could not be kept in the dead-letter queue.
    #[error("the dead-letter queue is unavailable")]
    DeadLetters(#[from] QueueError),
}

/// Why an occurrence takes no join now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum JoinRefusal {
    #[error("the occurrence is full")]
    Full,
    #[error("the tournament has not started")]
    NotStarted,
    #[error("the tournament has ended")]
    Ended,
    #[error("the player is banned from the tournament's game")]
    Banned,
    /// A league's previous occurrence, which the player played, has not settled their
    /// tier yet (its seal runs minutes after its end plus grace).
    #[error(
        "the player's previous occurrence of this league is being settled; try again in a minute"
    )]
    Settling,
}

impl JoinRefusal {
    pub fn code(self) -> &'static str {
        match self {
            Self::Full => "tournament_full",
            Self::NotStarted => "tournament_not_started",
            Self::Ended => "tournament_ended",
            Self::Banned => "banned_from_tournament",
            Self::Settling => "league_settling",
        }
    }
}

impl ServiceError {
    /// True for a fault of the service's backends or of contention, which a retry may
    /// get past; false for a request that will never succeed as it is.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            Self::Store(_)
                | Self::Index(_)
                | Self::Friends(_)
                | Self::DeadLetters(_)
                | Self::Contention
                | Self::RateLimited { .. }
                | Self::RankUnavailable(_)
                | Self::BoardResetting { .. }
        )
    }

    /// The field a refusal names (`{error: {field}}`): every 400 and 422 names one.
    pub fn field(&self) -> Option<&str> {
        match self {
            Self::Domain(d) => d.field(),
            Self::EventOutsideWindow(_) => Some("event_ts"),
            Self::UnknownRegion { .. } => Some("region"),
            _ => None,
        }
    }

    /// The stable code clients and logs see (`{error: {code}}`, Lambda's `errorType`).
    pub fn code(&self) -> &'static str {
        match self {
            Self::Domain(d) => match d {
                DomainError::Invalid { .. } => "invalid_request",
                DomainError::MalformedJson(_) => "malformed_json",
                DomainError::BodyTooLarge { .. } => "payload_too_large",
                DomainError::ScoreOutOfRange { .. } => "score_out_of_range",
                DomainError::TooManyDecimals { .. } => "too_many_decimals",
                DomainError::SubscoresMismatch { .. } => "subscores_mismatch",
                DomainError::OpNotAllowed { .. } => "op_not_allowed",
                DomainError::InvalidCursor => "invalid_cursor",
                DomainError::EventInFuture { .. } => "event_ts_in_future",
                DomainError::DenseNotKept => "dense_ranks_not_kept",
                DomainError::IntegrityRule { .. } => "invalid_integrity",
                DomainError::NotChangeable { .. } => "not_changeable",
                DomainError::Repeated { .. } => "repeated",
            },
            Self::EventOutsideWindow(_) => "event_outside_window",
            Self::UnknownRegion { .. } => "unknown_region",
            Self::WindowClosed { .. } => "window_closed",
            Self::FamilyNotFound { .. } => "family_not_found",
            Self::FamilyConflict { .. } => "family_conflict",
            Self::InvalidTransition { .. } => "invalid_transition",
            Self::BoardNotFound(_) => "board_not_found",
            Self::NotRanked { .. } => "not_ranked",
            Self::BoardConflict(_) => "board_conflict",
            Self::BoardNotActive { .. } => "board_not_active",
            Self::IdempotencyConflict(_) => "idempotency_conflict",
            Self::Contention => "contention",
            Self::ResultRejected(_) => "result_rejected",
            Self::HeldNotFound(_) => "held_not_found",
            Self::ExportNotFound(_) => "export_not_found",
            Self::AlreadyDecided { .. } => "already_decided",
            Self::HeldWindowSealed(_) => "window_sealed",
            Self::PlayerBanned { .. } => "player_banned",
            Self::NotBanned { .. } => "not_banned",
            Self::NotSealed(_) => "not_sealed",
            Self::NotSealable { .. } => "not_sealable",
            Self::BoardResetting { .. } => "board_resetting",
            Self::NotResettable { .. } => "not_resettable",
            Self::RewardNotFound(_) => "reward_not_found",
            Self::RewardExpired { .. } => "reward_expired",
            Self::MappingNotFound(_) => "mapping_not_found",
            Self::MappingConflict { .. } => "mapping_conflict",
            Self::NotYourView { .. } => "not_your_view",
            Self::ProfilesServerOnly => "profiles_server_only",
            Self::RateLimited { .. } => "rate_limited",
            Self::RankUnavailable(_) => "rank_unavailable",
            Self::WindowExpired(_) => "window_expired",
            Self::TournamentNotFound(_) => "tournament_not_found",
            Self::TournamentConflict(_) => "tournament_conflict",
            Self::JoinRefused { refusal, .. } => refusal.code(),
            Self::NotJoined { .. } => "not_joined",
            Self::AttemptsExhausted { .. } => "attempts_exhausted",
            Self::NoCohorts(_) => "no_cohorts",
            Self::NoLeague(_) => "no_league",
            Self::TournamentBoard { .. } => "tournament_board",
            Self::Store(_) => "store_unavailable",
            Self::Index(_) => "index_unavailable",
            Self::Friends(_) => "friends_unavailable",
            Self::DeadLetters(_) => "dead_letters_unavailable",
        }
    }
}
