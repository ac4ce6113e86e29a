//! Changing integrity rules after creation (docs/integrity.md): `PUT
//! /leaderboards/{lb}/integrity` for one board, `PUT /families/{game}/{mode}/integrity`
//! for a family and every board of it that still takes results. An operator's action
//! with a reason, audited with the rules before and after. A warm container applies the
//! new rules from its next result once its cached definition expires
//! (`BOARD_CACHE_TTL_MS`); results held or passed before stay as they were decided.
//!
//! A family's boards each carry the rules they were created with, so a family change
//! writes the family, then every open board of it; then, once a definition cached
//! before the change has expired everywhere, it looks again, for a window's board that
//! a container created from the old definition in between.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::board::asked_integrity;
use super::{BoardView, FamilyView};
use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, ReasonBody, record};
use crate::store::{AuditAction, BoardStore, ModerationStore};
use leaderboard_rules::board::{Board, BoardStatus};
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::integrity::Integrity;
use leaderboard_rules::page::Paging;
use leaderboard_rules::time::{now_ms, rfc3339_ms};
use leaderboard_rules::window::parse_name;

/// Boards listed per page while a family's change sweeps them.
const SWEEP_PAGE: u32 = 100;

/// Body of both routes: the new rules (`{}` for none, as at creation) and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesBody {
    pub integrity: Option<serde_json::Value>,
    pub reason: Option<serde_json::Value>,
}

impl RulesBody {
    /// The rules (checked against the scores' decimals) and the reason.
    fn read(self, scores: ScoreFormat) -> Result<(Option<Integrity>, Reason), DomainError> {
        let reason = Reason::parse(ReasonBody {
            reason: self.reason,
        })?;
        let Some(body) = self.integrity else {
            let why = "is required ({} for no rules)";
            return Err(DomainError::invalid("integrity", why));
        };
        Ok((asked_integrity(Some(body), scores)?, reason))
    }
}

/// `PUT /leaderboards/{lb}/integrity`'s reply.
#[derive(Debug, Serialize)]
pub struct BoardRulesChanged {
    /// The board as it is now.
    pub board: BoardView,
    /// Its rules before (absent: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<serde_json::Value>,
    pub audit_id: String,
}

/// `PUT /families/{game}/{mode}/integrity`'s reply.
#[derive(Debug, Serialize)]
pub struct FamilyRulesChanged {
    pub family: FamilyView,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous: Option<serde_json::Value>,
    /// The family's boards that take results and now have the new rules.
    pub boards: Vec<LeaderboardId>,
    pub audit_id: String,
}

/// Whether `board` may still take a result at `now` (so its rules still matter).
fn open(board: &Board, now: i64) -> bool {
    board.sealed_at.is_none() && board.effective_status(now) != BoardStatus::Closed
}

/// Replaces one board's rules. A board that takes no more results is a 409.
#[instrument(skip(store, op, body))]
pub async fn change_board_rules<S: BoardStore + ModerationStore>(
    store: &S,
    op: &Operator,
    lb: &LeaderboardId,
    body: RulesBody,
) -> Result<BoardRulesChanged, ServiceError> {
    let not_found = || ServiceError::BoardNotFound(lb.clone());
    let board = store.get_board(lb).await?.ok_or_else(not_found)?;
    let (rules, reason) = body.read(board.scores)?;
    let now = now_ms();
    if !open(&board, now) {
        return Err(match board.closes_at() {
            Some(at) => ServiceError::WindowClosed {
                lb: lb.clone(),
                closed_at: rfc3339_ms(at),
            },
            None => ServiceError::BoardNotActive {
                lb: lb.clone(),
                status: BoardStatus::Closed,
            },
        });
    }
    if !store.set_integrity(lb, rules.as_ref()).await? {
        return Err(not_found());
    }
    let previous = board.integrity.as_ref().map(|i| i.view(board.scores));
    let changed = Board {
        integrity: rules,
        ..board
    };
    let mut audit = record(op, AuditAction::SetIntegrity, &reason);
    audit.leaderboard_id = Some(lb.clone());
    audit.detail = serde_json::json!({
        "before": previous,
        "after": changed.integrity.as_ref().map(|i| i.view(changed.scores)),
    });
    store.append_audit(&audit).await?;
    Ok(BoardRulesChanged {
        board: BoardView::at(changed, now),
        previous,
        audit_id: audit.id,
    })
}

/// Replaces a family's rules and those of every board of it that takes results.
/// `cache_ttl`: how long a container trusts a cached family definition.
#[instrument(skip(store, op, body))]
pub async fn change_family_rules<S: BoardStore + ModerationStore>(
    store: &S,
    op: &Operator,
    (game, mode): (&str, &str),
    body: RulesBody,
    cache_ttl: Duration,
) -> Result<FamilyRulesChanged, ServiceError> {
    let (game, mode) = (parse_name("game", game)?, parse_name("mode", mode)?);
    let not_found = || ServiceError::FamilyNotFound {
        game: game.clone(),
        mode: mode.clone(),
    };
    let family = store
        .get_family(&game, &mode)
        .await?
        .ok_or_else(not_found)?;
    let (rules, reason) = body.read(family.scores)?;
    if !store.set_family_integrity(&family, rules.as_ref()).await? {
        return Err(not_found());
    }
    let prefix = format!("{game}#{mode}#");
    let mut boards = sweep(store, &prefix, rules.as_ref()).await?;
    // A container that read the family before the change may have created a window's
    // board from it since: look again once every cached definition has expired.
    tokio::time::sleep(cache_ttl + Duration::from_millis(100)).await;
    boards.extend(sweep(store, &prefix, rules.as_ref()).await?);
    boards.sort();
    boards.dedup();
    let previous = family.integrity.as_ref().map(|i| i.view(family.scores));
    let family = leaderboard_rules::family::Family {
        integrity: rules,
        ..family
    };
    let mut audit = record(op, AuditAction::SetIntegrity, &reason);
    audit.game = Some(game.clone());
    audit.detail = serde_json::json!({
        "mode": mode,
        "before": previous,
        "after": family.integrity.as_ref().map(|i| i.view(family.scores)),
        "boards": boards,
    });
    store.append_audit(&audit).await?;
    Ok(FamilyRulesChanged {
        family: FamilyView::at(family, now_ms()),
        previous,
        boards,
        audit_id: audit.id,
    })
}

/// Gives every open board listed under `prefix` whose rules differ `rules`; the boards
/// it changed.
async fn sweep<S: BoardStore>(
    store: &S,
    prefix: &str,
    rules: Option<&Integrity>,
) -> Result<Vec<LeaderboardId>, ServiceError> {
    let (mut changed, mut after) = (Vec::new(), None::<String>);
    loop {
        let page = (store.list_boards(prefix, Paging::new(after.as_deref(), SWEEP_PAGE))).await?;
        let now = now_ms();
        for board in page.boards {
            if open(&board, now)
                && board.integrity.as_ref() != rules
                && store.set_integrity(&board.leaderboard_id, rules).await?
            {
                changed.push(board.leaderboard_id);
            }
        }
        match page.next {
            Some(next) => after = Some(next),
            None => return Ok(changed),
        }
    }
}
