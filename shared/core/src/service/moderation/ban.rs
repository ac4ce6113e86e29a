//! `PUT /games/{game}/bans/{p}` and `DELETE /games/{game}/bans/{p}`, and the lists of a
//! game's bans and of a player's (`GET /games/{game}/bans`, `GET /admin/players/{p}/bans`): a player banned
//! from a game loses their standing on every board of the game's families (every mode,
//! scope and window, closed ones included) and every later result of theirs for the
//! game is refused with 403 `player_banned`.
//!
//! The ban is stored first; then every open board of the game gets a tombstone of the
//! player's row (a fence, written even where they have no standing), and every result
//! for the game reads the ban after the rows it writes, so no result can land after the
//! sweep passed its board (docs/cost.md has the proof). Lifting a ban
//! lets results in again; the removed standings do not come back (they are gone, not
//! hidden): the player starts over.

use std::time::Instant;

use serde::Serialize;
use tracing::instrument;

use super::{Sweep, needs_fence, sweep, take_off};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, record};
use crate::store::{AuditAction, Ban, BoardStore, ModerationStore, RankIndex, StandingStore};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::page::{Paging, limit_within};
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::window::parse_name;

/// Reply of a ban or of lifting one.
#[derive(Debug, Serialize)]
pub struct BanReply {
    pub game: String,
    pub player_id: PlayerId,
    pub banned: bool,
    pub reason: String,
    pub at: String,
    pub actor: String,
    /// The sweep of the game's boards (a lift sweeps nothing).
    #[serde(flatten)]
    pub sweep: Sweep,
    pub audit_id: String,
}

/// Bans the player from the game and takes their standings off its boards, from
/// `cursor` on until `deadline` (call again with the reply's cursor to go on; calling
/// again from the start is harmless too).
#[instrument(skip(ctx, reason, op, deadline))]
pub async fn ban<S: BoardStore + StandingStore + ModerationStore, I: RankIndex>(
    ctx: &Context<S, I>,
    game: &str,
    player: &PlayerId,
    reason: Reason,
    op: &Operator,
    cursor: Option<String>,
    deadline: Instant,
) -> Result<BanReply, ServiceError> {
    let game = parse_name("game", game)?;
    let ban = Ban {
        game: game.clone(),
        player_id: player.clone(),
        reason: reason.as_str().to_owned(),
        actor: op.0.clone(),
        at: now_ms(),
    };
    ctx.store.put_ban(&ban).await?;
    let swept = sweep(
        ctx,
        &format!("{game}#"),
        cursor,
        deadline,
        |board| async move {
            let fence = needs_fence(&board, now_ms());
            Ok(take_off(ctx, &board, player, fence).await?.is_some())
        },
    )
    .await?;
    let mut audit = record(op, AuditAction::Ban, &reason);
    audit.game = Some(game.clone());
    audit.player_id = Some(player.clone());
    audit.detail = serde_json::json!({
        "entries_removed": swept.entries,
        "boards_scanned": swept.boards_scanned,
        "complete": swept.complete,
    });
    ctx.store.append_audit(&audit).await?;
    Ok(BanReply {
        game,
        player_id: player.clone(),
        banned: true,
        reason: ban.reason,
        at: rfc3339_ms(ban.at),
        actor: ban.actor,
        sweep: swept,
        audit_id: audit.id,
    })
}

/// Lifts the ban (404 `not_banned` if there is none); later results count again.
#[instrument(skip(ctx, reason, op))]
pub async fn unban<S: ModerationStore, I: RankIndex>(
    ctx: &Context<S, I>,
    game: &str,
    player: &PlayerId,
    reason: Reason,
    op: &Operator,
) -> Result<BanReply, ServiceError> {
    let game = parse_name("game", game)?;
    let lifted = ctx.store.delete_ban(&game, player).await?;
    if lifted.is_none() {
        return Err(ServiceError::NotBanned {
            game,
            player: player.clone(),
        });
    }
    let mut audit = record(op, AuditAction::Unban, &reason);
    audit.game = Some(game.clone());
    audit.player_id = Some(player.clone());
    ctx.store.append_audit(&audit).await?;
    Ok(BanReply {
        game,
        player_id: player.clone(),
        banned: false,
        reason: reason.as_str().to_owned(),
        at: rfc3339_ms(audit.at),
        actor: op.0.clone(),
        sweep: Sweep {
            complete: true,
            ..Sweep::default()
        },
        audit_id: audit.id,
    })
}

/// One ban as the lists show it.
#[derive(Debug, Serialize)]
pub struct BanView {
    pub game: String,
    pub player_id: PlayerId,
    pub reason: String,
    pub actor: String,
    pub at: String,
}

impl From<Ban> for BanView {
    fn from(b: Ban) -> Self {
        Self {
            game: b.game,
            player_id: b.player_id,
            reason: b.reason,
            actor: b.actor,
            at: rfc3339_ms(b.at),
        }
    }
}

/// `GET /games/{game}/bans`: one page of the game's bans, in player id order.
#[derive(Debug, Serialize)]
pub struct BanList {
    pub game: String,
    pub bans: Vec<BanView>,
    pub next_cursor: Option<String>,
}

/// Bans listed per page unless asked, and at most.
pub const DEFAULT_BANS_LIMIT: u64 = 50;
pub const MAX_BANS_LIMIT: u64 = 200;

/// One page of the game's bans: `limit` (1 to [`MAX_BANS_LIMIT`]) after the player
/// `cursor` (the page before's `next_cursor`, the last player id it listed).
pub async fn list<S: ModerationStore>(
    store: &S,
    game: &str,
    limit: Option<&str>,
    cursor: Option<&str>,
) -> Result<BanList, ServiceError> {
    let game = parse_name("game", game)?;
    let limit = limit_within(limit, DEFAULT_BANS_LIMIT, MAX_BANS_LIMIT)? as u32;
    let after = (cursor.map(PlayerId::parse).transpose())
        .map_err(|_| DomainError::InvalidCursor)?
        .map(|p| p.to_string());
    let page = store
        .bans_page(&game, Paging::new(after.as_deref(), limit))
        .await?;
    Ok(BanList {
        game,
        bans: page.bans.into_iter().map(BanView::from).collect(),
        next_cursor: page.next,
    })
}

/// `GET /admin/players/{p}/bans`: the player's bans in every game.
#[derive(Debug, Serialize)]
pub struct PlayerBans {
    pub player_id: PlayerId,
    pub bans: Vec<BanView>,
}

/// Every ban of the player, by game.
pub async fn of_player<S: ModerationStore>(
    store: &S,
    player: &PlayerId,
) -> Result<PlayerBans, ServiceError> {
    let mut bans = store.bans_of(player).await?;
    bans.sort_by(|a, b| a.game.cmp(&b.game));
    Ok(PlayerBans {
        player_id: player.clone(),
        bans: bans.into_iter().map(BanView::from).collect(),
    })
}
