//! The per-container caches of board and family definitions.

use std::time::Duration;

use tracing::warn;

use crate::board::Board;
use crate::error::ServiceError;
use crate::family::Family;
use crate::ids::LeaderboardId;
use crate::store::ScoreStore;
use crate::ttl_cache::TtlCache;

/// Board definitions this container has read recently.
pub struct BoardCache(TtlCache<LeaderboardId, Board>);

impl BoardCache {
    pub fn new(ttl: Duration) -> Self {
        Self(TtlCache::new(ttl))
    }

    /// The board, from the cache or the store; unknown boards are not cached. If the
    /// store fails, a definition cached earlier is served even past its time.
    pub async fn get<S: ScoreStore>(
        &self,
        store: &S,
        lb: &LeaderboardId,
    ) -> Result<Board, ServiceError> {
        let cached = self.0.get_any(lb);
        if let Some((board, true)) = cached {
            return Ok(board);
        }
        let board = match store.get_board(lb).await {
            Ok(found) => found.ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?,
            // DynamoDB is away: an expired definition still orders reads correctly (the
            // policy never changes), and writes fail at the commit anyway.
            Err(e) => match cached {
                Some((board, _)) => {
                    warn!(board = %lb, error = %e, "serving a board definition past its cache time");
                    // Trust it for another period rather than wait on DynamoDB each read.
                    self.0.put(lb.clone(), board.clone());
                    return Ok(board);
                }
                None => return Err(e.into()),
            },
        };
        self.0.put(lb.clone(), board.clone());
        Ok(board)
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

    pub async fn get<S: ScoreStore>(
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
