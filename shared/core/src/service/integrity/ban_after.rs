//! A rejection's ban: once a player's rejected matches in a game reach a board's
//! `ban_after_rejections`, the decision bans them from the game (docs/integrity.md).

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::moderation::ban;
use crate::service::operator::{Operator, Reason, ReasonBody};
use crate::store::{HeldResult, IngestStore, RankIndex};
use leaderboard_rules::board::Board;

/// Bans the player from the game once their rejected matches reach the board's
/// `ban_after_rejections` (a board of a game only); whether this decision banned them.
/// The ban is recorded before its sweep; a sweep that runs out of time is finished by
/// banning again (`PUT /games/{game}/bans/{p}`), as for any ban.
pub(super) async fn ban_if_due<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    op: &Operator,
    board: &Board,
    held: &HeldResult,
) -> Result<bool, ServiceError> {
    let limit = (board.integrity.as_ref()).and_then(|r| r.ban_after_rejections);
    let (Some(limit), false) = (limit, held.game.is_empty()) else {
        return Ok(false);
    };
    let n = ctx.store.rejections(&held.game, &held.player_id).await?;
    if n < limit
        || ctx
            .store
            .get_ban(&held.game, &held.player_id)
            .await?
            .is_some()
    {
        return Ok(false);
    }
    let why = format!("{n} results rejected in review (ban_after_rejections: {limit})");
    let reason = Reason::parse(ReasonBody {
        reason: Some(why.into()),
    })?;
    let deadline = std::time::Instant::now() + BAN_SWEEP;
    let swept = ban::ban(ctx, &held.game, &held.player_id, reason, op, None, deadline).await?;
    if !swept.sweep.complete {
        tracing::warn!(game = %held.game, player = %held.player_id, "the ban's sweep ran out of time; ban again to finish it");
    }
    Ok(true)
}

/// How long a ban after rejections may sweep the game's boards within the decision.
const BAN_SWEEP: std::time::Duration = std::time::Duration::from_secs(10);
