//! Board management: standalone boards, board families, the board list and status
//! changes, plus the per-container caches of definitions.
//!
//! Policies never change after creation, so caching a definition is safe for ordering.
//! A status change reaches a warm container when its cached entry expires
//! (`BOARD_CACHE_TTL_MS`, default 1 s); time windows close by the clock, exactly.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::{instrument, warn};

use crate::board::{Board, BoardStatus, BoardWindow, Policy};
use crate::cursor::CursorSigner;
use crate::error::{DomainError, ServiceError};
use crate::ids::LeaderboardId;
use crate::store::{RankIndex, ScoreStore};
use crate::time::{now_ms, parse_ts, rfc3339_ms};
use crate::window::{Family, GLOBAL, Period, Season, parse_name, window_of};

/// A small map whose entries are trusted for a fixed time, with a bound on its size.
pub struct TtlCache<K, V> {
    ttl: Duration,
    max_entries: usize,
    entries: Mutex<HashMap<K, (V, Instant)>>,
}

impl<K: Eq + Hash, V: Clone> TtlCache<K, V> {
    pub fn new(ttl: Duration) -> Self {
        Self::bounded(ttl, 100_000)
    }

    /// At most `max_entries`: inserting past it drops the expired entries, or all of
    /// them if none has expired (a cache, not a store).
    pub fn bounded(ttl: Duration, max_entries: usize) -> Self {
        Self {
            ttl,
            max_entries,
            entries: Mutex::new(HashMap::new()),
        }
    }

    pub fn get(&self, key: &K) -> Option<V> {
        self.get_any(key)
            .filter(|(_, fresh)| *fresh)
            .map(|(v, _)| v)
    }

    /// The entry even if expired, and whether it is still fresh.
    pub fn get_any(&self, key: &K) -> Option<(V, bool)> {
        let entries = self.lock();
        let (value, at) = entries.get(key)?;
        Some((value.clone(), at.elapsed() < self.ttl))
    }

    pub fn put(&self, key: K, value: V) {
        let mut entries = self.lock();
        if entries.len() >= self.max_entries {
            let ttl = self.ttl;
            entries.retain(|_, (_, at)| at.elapsed() < ttl);
            if entries.len() >= self.max_entries {
                entries.clear();
            }
        }
        entries.insert(key, (value, Instant::now()));
    }

    pub fn forget(&self, key: &K) {
        self.lock().remove(key);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<K, (V, Instant)>> {
        // A panic while holding this lock cannot leave the map inconsistent.
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }
}

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

/// Body of `POST /leaderboards`.
#[derive(Debug, Deserialize)]
pub struct CreateBoard {
    pub leaderboard_id: LeaderboardId,
    #[serde(default)]
    pub policy: Policy,
}

/// A board as the API shows it. `status` is the effective one (a window past its end
/// plus grace shows CLOSED).
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct BoardView {
    pub leaderboard_id: LeaderboardId,
    pub policy: Policy,
    pub status: BoardStatus,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub game: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    /// When late results stop being accepted (end plus grace).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closes_at: Option<String>,
}

impl BoardView {
    pub fn at(b: Board, now: i64) -> Self {
        let status = b.effective_status(now);
        let closes_at = b.closes_at().map(rfc3339_ms);
        let w = b.window;
        Self {
            leaderboard_id: b.leaderboard_id,
            policy: b.policy,
            status,
            created_at: rfc3339_ms(b.created_at),
            game: w.as_ref().map(|w| w.game.clone()),
            mode: w.as_ref().map(|w| w.mode.clone()),
            scope: w.as_ref().map(|w| w.scope.clone()),
            period: w.as_ref().map(|w| w.window.period),
            window: w.as_ref().and_then(|w| w.window.key.clone()),
            starts_at: w.as_ref().and_then(|w| w.window.start).map(rfc3339_ms),
            ends_at: w.as_ref().and_then(|w| w.window.end).map(rfc3339_ms),
            closes_at,
        }
    }
}

/// Whether a create made the resource or found it already there with the same settings.
#[derive(Debug, PartialEq, Eq)]
pub enum Created<T> {
    New(T),
    Existing(T),
}

/// Creates a board. Asking again with the same settings is not an error (the existing
/// board is returned); different settings are a [`ServiceError::BoardConflict`].
/// A new board's index is marked complete (it is empty); if Redis is down then, the
/// rebuild sweep finds the board unmarked and marks it later.
#[instrument(skip(store, index), fields(board = %req.leaderboard_id))]
pub async fn create_board<S: ScoreStore, I: RankIndex>(
    store: &S,
    index: &I,
    req: CreateBoard,
) -> Result<Created<BoardView>, ServiceError> {
    let now = now_ms();
    let board = Board {
        leaderboard_id: req.leaderboard_id,
        policy: req.policy,
        status: BoardStatus::Active,
        created_at: now,
        window: None,
    };
    match store.create_board(&board).await? {
        None => {
            init_index(index, &board.leaderboard_id, None).await;
            Ok(Created::New(BoardView::at(board, now)))
        }
        Some(existing) if existing.policy == board.policy && existing.window.is_none() => {
            Ok(Created::Existing(BoardView::at(existing, now)))
        }
        Some(existing) => Err(ServiceError::BoardConflict(existing.leaderboard_id)),
    }
}

/// Marks a board this call created as completely indexed; a failure is only logged.
pub async fn init_index<I: RankIndex>(index: &I, lb: &LeaderboardId, expire_at: Option<i64>) {
    if let Err(error) = index.init_board(lb, expire_at).await {
        warn!(board = %lb, %error, "could not mark the new board's index; the rebuild sweep will");
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
        .map(|b| BoardView::at(b, now_ms()))
        .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))
}

/// Body of `PATCH /leaderboards/{lb}`.
#[derive(Debug, Deserialize)]
pub struct PatchBoard {
    pub status: BoardStatus,
}

/// Changes a board's status: ACTIVE <-> FROZEN, either -> CLOSED, nothing out of CLOSED.
/// Asking for the status the board already has changes nothing and succeeds.
#[instrument(skip(store))]
pub async fn set_status<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
    to: BoardStatus,
) -> Result<BoardView, ServiceError> {
    let not_found = || ServiceError::BoardNotFound(lb.clone());
    // A concurrent change makes the conditional write fail; read again and decide again.
    for _ in 0..5 {
        let board = store.get_board(lb).await?.ok_or_else(not_found)?;
        let now = now_ms();
        let from = board.effective_status(now);
        if from == to {
            return Ok(BoardView::at(board, now));
        }
        if !board.can_become(to, now) {
            return Err(ServiceError::InvalidTransition {
                lb: lb.clone(),
                from,
                to,
            });
        }
        if store.set_status(lb, board.status, to).await? {
            let changed = Board {
                status: to,
                ..board
            };
            return Ok(BoardView::at(changed, now));
        }
    }
    Err(ServiceError::Contention)
}

/// Query of `GET /leaderboards`.
#[derive(Debug, Default)]
pub struct ListQuery {
    pub game: Option<String>,
    pub mode: Option<String>,
    pub status: Option<BoardStatus>,
    pub limit: u32,
    pub cursor: Option<String>,
}

/// Default and largest page of the board list.
pub const DEFAULT_LIST_LIMIT: u32 = 50;
pub const MAX_LIST_LIMIT: u32 = 200;

/// Reply of `GET /leaderboards`.
#[derive(Debug, Serialize)]
pub struct BoardList {
    pub boards: Vec<BoardView>,
    pub next_cursor: Option<String>,
}

impl ListQuery {
    /// Validates the raw query parameters.
    pub fn parse(
        game: Option<&str>,
        mode: Option<&str>,
        status: Option<&str>,
        limit: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<Self, DomainError> {
        if mode.is_some() && game.is_none() {
            return Err(DomainError::invalid("mode", "needs game"));
        }
        let status = status
            .map(|s| {
                serde_json::from_value(serde_json::Value::String(s.to_owned()))
                    .map_err(|_| DomainError::invalid("status", "must be ACTIVE, FROZEN or CLOSED"))
            })
            .transpose()?;
        let limit = match limit {
            None => DEFAULT_LIST_LIMIT,
            Some(l) => l
                .parse::<u32>()
                .ok()
                .filter(|l| (1..=MAX_LIST_LIMIT).contains(l))
                .ok_or_else(|| {
                    DomainError::invalid("limit", format!("must be 1 to {MAX_LIST_LIMIT}"))
                })?,
        };
        Ok(Self {
            game: game.map(|g| parse_name("game", g)).transpose()?,
            mode: mode.map(|m| parse_name("mode", m)).transpose()?,
            status,
            limit,
            cursor: cursor.map(str::to_owned),
        })
    }

    fn prefix(&self) -> String {
        match (&self.game, &self.mode) {
            (Some(g), Some(m)) => format!("{g}#{m}#"),
            (Some(g), None) => format!("{g}#"),
            _ => String::new(),
        }
    }
}

/// Lists boards by game and mode, optionally by (effective) status, a page at a time.
/// Pages filtered by status may hold fewer than `limit` boards; `next_cursor` is null
/// only at the end.
#[instrument(skip(store, signer))]
pub async fn list_boards<S: ScoreStore>(
    store: &S,
    signer: &CursorSigner,
    q: ListQuery,
) -> Result<BoardList, ServiceError> {
    let prefix = q.prefix();
    let after: Option<String> = q
        .cursor
        .as_deref()
        .map(|c| signer.verify(&format!("list:{prefix}"), c))
        .transpose()?;
    let page = store
        .list_boards(&prefix, after.as_deref(), q.limit)
        .await?;
    let now = now_ms();
    let boards = page
        .boards
        .into_iter()
        .map(|b| BoardView::at(b, now))
        .filter(|b| q.status.is_none_or(|s| b.status == s))
        .collect();
    Ok(BoardList {
        boards,
        next_cursor: page
            .next
            .map(|sk| signer.sign(&format!("list:{prefix}"), &sk)),
    })
}

/// Body of `POST /families`.
#[derive(Debug, Deserialize)]
pub struct CreateFamily {
    pub game: String,
    pub mode: String,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default)]
    pub regions: Vec<String>,
    pub periods: Vec<Period>,
    pub season: Option<SeasonBody>,
    /// Seconds after a window's end during which late results are still accepted.
    #[serde(default = "default_grace_seconds")]
    pub grace_seconds: i64,
}

fn default_grace_seconds() -> i64 {
    300
}

/// A season as the API takes it.
#[derive(Debug, Deserialize)]
pub struct SeasonBody {
    pub id: String,
    pub start: serde_json::Value,
    pub end: serde_json::Value,
}

/// A family as the API shows it, with the ids of the windows open now.
#[derive(Debug, Serialize)]
pub struct FamilyView {
    pub game: String,
    pub mode: String,
    pub policy: Policy,
    pub regions: Vec<String>,
    pub periods: Vec<Period>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub season: Option<SeasonView>,
    pub grace_seconds: i64,
    /// scope -> period -> board id of the window that contains now.
    pub current: BTreeMap<String, BTreeMap<Period, LeaderboardId>>,
}

#[derive(Debug, Serialize)]
pub struct SeasonView {
    pub id: String,
    pub start: String,
    pub end: String,
}

impl FamilyView {
    fn at(f: Family, now: i64) -> Self {
        let mut current: BTreeMap<String, BTreeMap<Period, LeaderboardId>> = BTreeMap::new();
        for scope in std::iter::once(GLOBAL).chain(f.regions.iter().map(String::as_str)) {
            for period in &f.periods {
                if let Ok(w) = window_of(*period, f.season.as_ref(), now) {
                    current
                        .entry(scope.to_owned())
                        .or_default()
                        .insert(*period, f.board_id(scope, &w));
                }
            }
        }
        Self {
            season: f.season.as_ref().map(|s| SeasonView {
                id: s.id.clone(),
                start: rfc3339_ms(s.start),
                end: rfc3339_ms(s.end),
            }),
            game: f.game,
            mode: f.mode,
            policy: f.policy,
            regions: f.regions,
            periods: f.periods,
            grace_seconds: f.grace_ms / 1000,
            current,
        }
    }
}

impl CreateFamily {
    fn into_family(self) -> Result<Family, DomainError> {
        let season = self
            .season
            .map(|s| {
                Ok::<_, DomainError>(Season {
                    id: s.id,
                    start: parse_ts("season.start", &s.start)?,
                    end: parse_ts("season.end", &s.end)?,
                })
            })
            .transpose()?;
        Family {
            game: self.game,
            mode: self.mode,
            policy: self.policy,
            regions: self.regions,
            periods: self.periods,
            season,
            grace_ms: self.grace_seconds.saturating_mul(1000),
        }
        .validated()
    }
}

/// Declares a board family. The same settings again return the existing family;
/// different settings are a [`ServiceError::FamilyConflict`].
#[instrument(skip(store, req), fields(game = %req.game, mode = %req.mode))]
pub async fn create_family<S: ScoreStore>(
    store: &S,
    req: CreateFamily,
) -> Result<Created<FamilyView>, ServiceError> {
    let family = req.into_family()?;
    let now = now_ms();
    match store.create_family(&family).await? {
        None => Ok(Created::New(FamilyView::at(family, now))),
        Some(existing) if existing == family => {
            Ok(Created::Existing(FamilyView::at(existing, now)))
        }
        Some(existing) => Err(ServiceError::FamilyConflict {
            game: existing.game,
            mode: existing.mode,
        }),
    }
}

/// Reads a family with the ids of its current windows.
pub async fn get_family<S: ScoreStore>(
    store: &S,
    game: &str,
    mode: &str,
) -> Result<FamilyView, ServiceError> {
    let (game, mode) = (parse_name("game", game)?, parse_name("mode", mode)?);
    store
        .get_family(&game, &mode)
        .await?
        .map(|f| FamilyView::at(f, now_ms()))
        .ok_or(ServiceError::FamilyNotFound { game, mode })
}

/// The board of `family` for `scope` and `window`, as its first write creates it.
pub fn family_board(
    family: &Family,
    scope: &str,
    window: crate::window::Window,
    now: i64,
) -> Board {
    Board {
        leaderboard_id: family.board_id(scope, &window),
        policy: family.policy,
        status: BoardStatus::Active,
        created_at: now,
        window: Some(BoardWindow {
            game: family.game.clone(),
            mode: family.mode.clone(),
            scope: scope.to_owned(),
            window,
            grace_ms: family.grace_ms,
        }),
    }
}
