//! `DELETE /leaderboards/{lb}/players/{p}`: one standing taken off one board.

use serde::Serialize;
use tracing::instrument;

use super::{TakenOff, take_off};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, record};
use crate::store::{AuditAction, BoardStore, ModerationStore, RankIndex, StandingStore};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};

/// Reply of a removal.
#[derive(Debug, Serialize)]
pub struct RemovedReply {
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub removed: bool,
    #[serde(flatten)]
    pub taken_off: TakenOff,
    pub reason: String,
    pub audit_id: String,
}

/// Takes the player's standing off the board (everyone below moves up) and records it;
/// 404 `not_ranked` when they have none there.
#[instrument(skip(ctx, reason, op))]
pub async fn remove_entry<S: BoardStore + StandingStore + ModerationStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    player: &PlayerId,
    reason: Reason,
    op: &Operator,
) -> Result<RemovedReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let not_ranked = || ServiceError::NotRanked {
        lb: lb.clone(),
        player: player.clone(),
    };
    let taken_off = take_off(ctx, &board, player, false)
        .await?
        .ok_or_else(not_ranked)?;
    let mut audit = record(op, AuditAction::RemoveEntry, &reason);
    audit.leaderboard_id = Some(lb.clone());
    audit.player_id = Some(player.clone());
    audit.detail = serde_json::to_value(taken_off).unwrap_or_default();
    ctx.store.append_audit(&audit).await?;
    Ok(RemovedReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        removed: true,
        taken_off,
        reason: reason.as_str().to_owned(),
        audit_id: audit.id,
    })
}
