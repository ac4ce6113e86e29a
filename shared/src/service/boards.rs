//! Board definitions: create, read, and a per-container cache of definitions.
//!
//! Policies never change after creation, so caching a definition is safe for ordering.
//! A status change reaches a warm container when its cached entry expires
//! (`BOARD_CACHE_TTL_MS`, default 1 s).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::instrument;

use crate::board::{Board, BoardStatus, Policy};
use crate::error::ServiceError;
use crate::ids::LeaderboardId;
use crate::store::ScoreStore;
use crate::time::{now_ms, rfc3339_ms};

/// Board definitions this container has read recently.
pub struct BoardCache {
    ttl: Duration,
    entries: Mutex<HashMap<LeaderboardId, (Board, Instant)>>,
}

impl BoardCache {
    pub fn new(ttl: Duration) -> Self {
        Self {
            ttl,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The board, from the cache or the store; unknown boards are not cached.
    pub async fn get<S: ScoreStore>(
        &self,
        store: &S,
        lb: &LeaderboardId,
    ) -> Result<Board, ServiceError> {
        if let Some(board) = self.cached(lb) {
            return Ok(board);
        }
        let board = store
            .get_board(lb)
            .await?
            .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
        self.lock()
            .insert(lb.clone(), (board.clone(), Instant::now()));
        Ok(board)
    }

    /// Drops a definition known to be stale.
    pub fn forget(&self, lb: &LeaderboardId) {
        self.lock().remove(lb);
    }

    fn cached(&self, lb: &LeaderboardId) -> Option<Board> {
        let entries = self.lock();
        let (board, at) = entries.get(lb)?;
        (at.elapsed() < self.ttl).then(|| board.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<LeaderboardId, (Board, Instant)>> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Body of `POST /leaderboards`.
#[derive(Debug, Deserialize)]
pub struct CreateBoard {
    pub leaderboard_id: LeaderboardId,
    #[serde(default)]
    pub policy: Policy,
}

/// A board as the API shows it.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct BoardView {
    pub leaderboard_id: LeaderboardId,
    pub policy: Policy,
    pub status: BoardStatus,
    pub created_at: String,
}

impl From<Board> for BoardView {
    fn from(b: Board) -> Self {
        Self {
            leaderboard_id: b.leaderboard_id,
            policy: b.policy,
            status: b.status,
            created_at: rfc3339_ms(b.created_at),
        }
    }
}

/// Whether `create_board` made the board or found it already there.
#[derive(Debug, PartialEq, Eq)]
pub enum Created {
    New(BoardView),
    Existing(BoardView),
}

/// Creates a board. Asking again with the same settings is not an error (the existing
/// board is returned); different settings are a [`ServiceError::BoardConflict`].
#[instrument(skip(store), fields(board = %req.leaderboard_id))]
pub async fn create_board<S: ScoreStore>(
    store: &S,
    req: CreateBoard,
) -> Result<Created, ServiceError> {
    let board = Board {
        leaderboard_id: req.leaderboard_id,
        policy: req.policy,
        status: BoardStatus::Active,
        created_at: now_ms(),
    };
    match store.create_board(&board).await? {
        None => Ok(Created::New(board.into())),
        Some(existing) if existing.policy == board.policy => Ok(Created::Existing(existing.into())),
        Some(existing) => Err(ServiceError::BoardConflict(existing.leaderboard_id)),
    }
}

/// Reads one board (always from the store, never the cache).
pub async fn get_board<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
) -> Result<BoardView, ServiceError> {
    store
        .get_board(lb)
        .await?
        .map(BoardView::from)
        .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))
}
