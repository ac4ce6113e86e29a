//! `DELETE /players/{p}`: a player erased (GDPR): every standing, tombstone and receipt
//! of theirs on every board (closed windows included), their entries in the index, their
//! id in sealed results (the place stays, unnamed), their tournament seats (the seat
//! stays, unnamed) and memberships, their league standings (a sealed league cohort's
//! outcome stays, unnamed), their history, their rewards, their bans, their
//! profile (and with their rows, every result's metadata), and their id in the audit
//! trail. Idempotent and resumable:
//! a call that runs out of time answers `complete: false` with a cursor to go on from
//! (starting over is harmless too). Only when complete is the erasure itself recorded,
//! without the player's id.

use std::time::Instant;

use serde::Serialize;
use tracing::{instrument, warn};

use super::{Sweep, sweep};
use crate::service::Context;
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, record};
use crate::store::{
    AuditAction, EntryKind, IndexEntry, IngestStore, ProfileStore, RankIndex, RewardStore,
    SealStore,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::time::now_ms;

/// Reply of an erasure call.
#[derive(Debug, Serialize)]
pub struct ErasedReply {
    #[serde(flatten)]
    pub sweep: Sweep,
    /// Set once complete: the erasure's audit record (which names no player).
    pub audit_id: Option<String>,
}

#[instrument(skip_all)]
pub async fn erase<S: IngestStore + SealStore + ProfileStore + RewardStore, I: RankIndex>(
    ctx: &Context<S, I>,
    player: &PlayerId,
    reason: Reason,
    op: &Operator,
    cursor: Option<String>,
    deadline: Instant,
) -> Result<ErasedReply, ServiceError> {
    let swept = sweep(ctx, "", cursor, deadline, |board| async move {
        let lb = &board.leaderboard_id;
        // Results exist only for closed windows (sealed, or being sealed).
        let closed = board.closes_at().is_some_and(|at| at <= now_ms());
        let mut unnamed = closed && ctx.store.redact_results(lb, player).await?;
        // So do the archives of the board's resets.
        for n in 1..=board.reset.as_ref().map_or(0, |r| r.n) {
            let archive = LeaderboardId::archive(lb, n);
            unnamed |= ctx.store.redact_results(&archive, player).await?;
        }
        // A tournament occurrence's seat and membership name the player too, and a
        // league's standing (a sealed cohort's outcome is unnamed with its results).
        if let Some(t) = board.tournament.as_deref().filter(|_| !board.is_cohort()) {
            unnamed |= ctx.store.forget_member(lb, player).await?;
            unnamed |= ctx.store.forget_league_standing(t, player).await?;
        }
        let Some(version) = ctx.store.erase_player(lb, player).await? else {
            return Ok(unnamed);
        };
        let entry = IndexEntry::removal(
            lb,
            board.policy.direction(),
            player,
            version,
            ctx.settings.index_expire_at(&board),
            EntryKind::Erased,
        );
        if let Err(error) = ctx.index.apply_many(&[entry]).await {
            warn!(%error, "index unavailable; the stream will erase the entry");
        }
        Ok(true)
    })
    .await?;
    if !swept.complete {
        return Ok(ErasedReply {
            sweep: swept,
            audit_id: None,
        });
    }
    let history = ctx.store.erase_history(player).await?;
    let rewards = ctx.store.erase_rewards(player).await?;
    let profile = crate::service::profiles::erase(ctx, player).await?;
    for ban in ctx.store.bans_of(player).await? {
        ctx.store.delete_ban(&ban.game, player).await?;
    }
    let redacted = ctx.store.redact_audit(player).await?;
    let mut audit = record(op, AuditAction::Erase, &reason);
    audit.detail = serde_json::json!({
        "boards_scanned": swept.boards_scanned,
        "entries_erased": swept.entries,
        "audit_records_redacted": redacted,
        "history_rows_erased": history,
        "rewards_erased": rewards,
        "profile_erased": profile,
    });
    ctx.store.append_audit(&audit).await?;
    Ok(ErasedReply {
        sweep: swept,
        audit_id: Some(audit.id),
    })
}
