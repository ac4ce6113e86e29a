//! Changing a reward table after creation (docs/rewards.md): `PUT
//! /leaderboards/{lb}/rewards` for a standalone board (paid when a reset seals it),
//! `PUT /families/{game}/{mode}/rewards` for a family (each window paid by the
//! family's table as it is at the window's seal). An operator's action with a reason,
//! audited with the table before and after. A seal that has decided its window's
//! rewards keeps the table it decided them by.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::{BoardView, FamilyView};
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, ReasonBody, record};
use crate::store::{AuditAction, BoardStore, ModerationStore};
use leaderboard_rules::board::Board;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::reward::RewardTable;
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::parse_name;

/// Body of both routes: the new table (`{}` for none, as integrity rules take it) and
/// why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewardsBody {
    pub rewards: Option<serde_json::Value>,
    pub reason: Option<serde_json::Value>,
}

impl RewardsBody {
    fn read(self) -> Result<(Option<RewardTable>, Reason), DomainError> {
        let reason = Reason::parse(ReasonBody {
            reason: self.reason,
        })?;
        match self.rewards {
            None => Err(DomainError::invalid("rewards", "is required ({} for none)")),
            Some(serde_json::Value::Object(m)) if m.is_empty() => Ok((None, reason)),
            body => Ok((RewardTable::asked(body)?, reason)),
        }
    }
}

/// `PUT /leaderboards/{lb}/rewards`'s reply.
#[derive(Debug, Serialize)]
pub struct BoardRewardsChanged {
    pub board: BoardView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<RewardTable>,
    pub audit_id: String,
}

/// `PUT /families/{game}/{mode}/rewards`'s reply.
#[derive(Debug, Serialize)]
pub struct FamilyRewardsChanged {
    pub family: FamilyView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<RewardTable>,
    pub audit_id: String,
}

/// Replaces a standalone board's table. A family's board (its family's table pays it)
/// and a tournament's (its tournament's) are a 409.
#[instrument(skip(store, op, body))]
pub async fn change_board_rewards<S: BoardStore + ModerationStore>(
    store: &S,
    op: &Operator,
    lb: &LeaderboardId,
    body: RewardsBody,
) -> Result<BoardRewardsChanged, ServiceError> {
    let not_found = || ServiceError::BoardNotFound(lb.clone());
    let board = store.get_board(lb).await?.ok_or_else(not_found)?;
    let (table, reason) = body.read()?;
    if board.window.is_some() || board.tournament.is_some() {
        return Err(DomainError::NotChangeable {
            field: "rewards",
            reason: "a family's board is paid by its family's table, a tournament's by its \
                     tournament's"
                .into(),
        }
        .into());
    }
    if !store.set_rewards(lb, table.as_ref()).await? {
        return Err(not_found());
    }
    let previous = board.rewards.clone();
    let changed = Board {
        rewards: table,
        ..board
    };
    let mut audit = record(op, AuditAction::SetRewards, &reason);
    audit.leaderboard_id = Some(lb.clone());
    audit.detail = serde_json::json!({"before": previous, "after": changed.rewards});
    store.append_audit(&audit).await?;
    Ok(BoardRewardsChanged {
        board: BoardView::at(changed, now_ms()),
        previous,
        audit_id: audit.id,
    })
}

/// Replaces a family's table: every window of it not yet sealed is paid by it.
#[instrument(skip(store, op, body))]
pub async fn change_family_rewards<S: BoardStore + ModerationStore>(
    store: &S,
    op: &Operator,
    (game, mode): (&str, &str),
    body: RewardsBody,
) -> Result<FamilyRewardsChanged, ServiceError> {
    let (game, mode) = (parse_name("game", game)?, parse_name("mode", mode)?);
    let not_found = || ServiceError::FamilyNotFound {
        game: game.clone(),
        mode: mode.clone(),
    };
    let family = (store.get_family(&game, &mode).await?).ok_or_else(not_found)?;
    let (table, reason) = body.read()?;
    if !store.set_family_rewards(&family, table.as_ref()).await? {
        return Err(not_found());
    }
    let previous = family.rewards.clone();
    let family = Family {
        rewards: table,
        ..family
    };
    let mut audit = record(op, AuditAction::SetRewards, &reason);
    audit.game = Some(game);
    audit.detail = serde_json::json!({"mode": mode, "before": previous, "after": family.rewards});
    store.append_audit(&audit).await?;
    Ok(FamilyRewardsChanged {
        family: FamilyView::at(family, now_ms()),
        previous,
        audit_id: audit.id,
    })
}
