//! The per-container caches of board and family definitions.

use std::time::Duration;

use tracing::warn;

use crate::service::ServiceError;
use crate::service::ttl_cache::TtlCache;
use crate::store::BoardStore;
use leaderboard_rules::board::Board;
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;

/// Board definitions this container has read recently.
pub struct BoardCache(TtlCache<LeaderboardId, Board>);

/// How long a lookup that would only refresh a cached definition may take before the
/// cached one is served: a silent DynamoDB then costs a read this once per cache period,
/// not the whole DynamoDB budget each time.
const REFRESH_WITHIN: Duration = Duration::from_millis(250);

impl BoardCache {
    pub fn new(ttl: Duration) -> Self {
        Self(TtlCache::new(ttl))
    }

    /// The board for a read, from the cache or the store; unknown boards are not
    /// cached. If the store fails, or takes longer than `REFRESH_WITHIN` (250 ms) to
    /// refresh it, a definition cached earlier is served even past its time.
    pub async fn get<S: BoardStore>(
        &self,
        store: &S,
        lb: &LeaderboardId,
    ) -> Result<Board, ServiceError> {
        let stale = match self.0.get_any(lb) {
            Some((board, true)) => return Ok(board),
            Some((board, false)) => board,
            None => return self.remember(lb, store.get_board(lb).await?),
        };
        let why = match tokio::time::timeout(REFRESH_WITHIN, store.get_board(lb)).await {
            Ok(Ok(found)) => return self.remember(lb, found),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("no answer within {REFRESH_WITHIN:?}"),
        };
        // DynamoDB is away or slow: an expired definition still orders reads correctly
        // (the policy never changes). Trust it for another period rather than wait on
        // DynamoDB for each read.
        warn!(board = %lb, error = %why, "serving a board definition past its cache time");
        self.0.put(lb.clone(), stale.clone());
        Ok(stale)
    }

    /// The board for a write: from the cache only while its time lasts, else read
    /// again, however long the store takes (its errors propagate). A write must honour
    /// a status change (a frozen or closed board) within one cache period, and it needs
    /// DynamoDB to commit anyway; a definition past its time is never used here, even
    /// while reads are served one.
    pub async fn current<S: BoardStore>(
        &self,
        store: &S,
        lb: &LeaderboardId,
    ) -> Result<Board, ServiceError> {
        match self.0.get_any(lb) {
            Some((board, true)) => Ok(board),
            _ => self.remember(lb, store.get_board(lb).await?),
        }
    }

    /// Caches a definition just read; an unknown board is an error and not cached.
    fn remember(&self, lb: &LeaderboardId, found: Option<Board>) -> Result<Board, ServiceError> {
        let board = found.ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
        self.0.put(lb.clone(), board.clone());
        Ok(board)
    }

    /// The game of a board this container has read, if it has one (a definition's game
    /// never changes, so one past its time still says it). Nothing is read to say it.
    pub fn game_of(&self, lb: &LeaderboardId) -> Option<String> {
        self.0
            .peek(lb, |b| b.window.as_ref().map(|w| w.game.clone()))
            .flatten()
    }

    /// Remembers a definition this container just wrote.
    pub fn put(&self, board: Board) {
        self.0.put(board.leaderboard_id.clone(), board);
    }

    /// Drops a definition known to be stale.
    pub fn forget(&self, lb: &LeaderboardId) {
        self.0.forget(lb);
    }
}

/// Family definitions this container has read recently, by (game, mode).
pub struct FamilyCache(TtlCache<(String, String), Family>);

impl FamilyCache {
    pub fn new(ttl: Duration) -> Self {
        Self(TtlCache::new(ttl))
    }

    pub async fn get<S: BoardStore>(
        &self,
        store: &S,
        game: &str,
        mode: &str,
    ) -> Result<Family, ServiceError> {
        let key = (game.to_owned(), mode.to_owned());
        if let Some(f) = self.0.get(&key) {
            return Ok(f);
        }
        let family =
            store
                .get_family(game, mode)
                .await?
                .ok_or_else(|| ServiceError::FamilyNotFound {
                    game: game.to_owned(),
                    mode: mode.to_owned(),
                })?;
        self.0.put(key, family.clone());
        Ok(family)
    }
}
