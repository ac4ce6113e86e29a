//! The board list, by game and mode, a signed-cursor page at a time.

use leaderboard_rules::page::Paging;
use serde::Serialize;
use tracing::instrument;

use super::BoardView;
use crate::service::ServiceError;
use crate::store::BoardStore;
use leaderboard_rules::board::BoardStatus;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::page::limit_within;
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::parse_name;

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
        let limit = limit_within(limit, DEFAULT_LIST_LIMIT.into(), MAX_LIST_LIMIT.into())? as u32;
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
pub async fn list_boards<S: BoardStore>(
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
        .list_boards(&prefix, Paging::new(after.as_deref(), q.limit))
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
