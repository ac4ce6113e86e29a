//! The review queue: a game's held results, oldest first, a match held on many boards
//! listed once with its boards, each with its figures and the player's latest results
//! (an operator's decision on a match: `decision`).

use leaderboard_rules::page::Paging;
use serde::Serialize;

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{Consistency, HeldFilter, HeldResult, IngestStore, RankIndex, Review, Row};
use leaderboard_rules::board::Board;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::integrity::Rule;
use leaderboard_rules::time::rfc3339_ms;

/// The longest held result's id (openapi.yaml's `maxLength`): a game, the time and three
/// ids with their separators fit in it; a longer path is a 400, not a search.
pub const MAX_HELD_ID: usize = 600;

/// A held result's id in the API: `{game}~{held_at}~{board}~{player}~{match}` (ids
/// never hold `~`), its game's queue and its place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldId {
    pub game: String,
    /// The queue key ([`crate::store::queue_key`]).
    pub key: String,
    pub board: LeaderboardId,
    pub player: PlayerId,
    pub match_id: leaderboard_rules::ids::MatchId,
}

impl HeldId {
    /// The id of a held result.
    pub fn of(h: &crate::store::HeldResult) -> Self {
        Self {
            game: h.game.clone(),
            key: h.queue_key(),
            board: h.leaderboard_id.clone(),
            player: h.player_id.clone(),
            match_id: h.match_id.clone(),
        }
    }

    pub fn parse(text: &str) -> Result<Self, DomainError> {
        let bad = || DomainError::invalid("id", "is not a held result's id");
        let parts: Vec<&str> = text.split('~').collect();
        let [game, at, board, player, match_id] = parts[..] else {
            return Err(bad());
        };
        if at.len() != 13 || !at.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let held_at: i64 = at.parse().map_err(|_| bad())?;
        let (board, player) = (LeaderboardId::parse(board)?, PlayerId::parse(player)?);
        let match_id = leaderboard_rules::ids::MatchId::parse(match_id)?;
        Ok(Self {
            game: game.to_owned(),
            key: crate::store::queue_key(held_at, &board, &player, &match_id),
            board,
            player,
            match_id,
        })
    }
}

/// One of the player's latest results on the board, as the row's receipts keep them.
#[derive(Debug, Serialize)]
pub struct RecentResult {
    pub match_id: String,
    pub score: Shown,
    pub update_applied: bool,
    /// `HELD` (with the rule), `REJECTED`, or absent for a result that counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<&'static str>,
}

/// A held result as the queue shows it.
#[derive(Debug, Serialize)]
pub struct HeldView {
    pub id: String,
    pub game: String,
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub match_id: String,
    pub score: Shown,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_ts: Option<String>,
    pub held_at: String,
    pub rule: &'static str,
    /// The figure the result showed and the limit it passed (scores as the board
    /// writes them; a count for `rate`, ms for `min_duration`).
    pub value: serde_json::Value,
    pub limit: serde_json::Value,
    /// The player's standing when it was held.
    pub standing: Option<Shown>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// The player's latest results on the board, newest first.
    pub recent: Vec<RecentResult>,
    /// Every board that held the match (this one first): one decision decides them all.
    pub boards: Vec<HeldBoard>,
}

/// One board that held a match, as the queue shows it.
#[derive(Debug, Serialize)]
pub struct HeldBoard {
    pub id: String,
    pub leaderboard_id: LeaderboardId,
    pub rule: &'static str,
    pub value: serde_json::Value,
    pub limit: serde_json::Value,
    pub standing: Option<Shown>,
}

/// One page of the queue.
#[derive(Debug, Serialize)]
pub struct QueuePage {
    pub held: Vec<HeldView>,
    pub next_cursor: Option<String>,
}

/// A rule's figure as replies write it: a score as the board writes it, else the number.
pub(super) fn figure(board: &Board, rule: Rule, v: i64) -> serde_json::Value {
    match leaderboard_rules::score::Score::new("value", v) {
        Ok(s) if rule.in_score_units() => serde_json::json!(board.scores.show(s)),
        _ => v.into(),
    }
}

fn recent_of(board: &Board, row: &Row) -> Vec<RecentResult> {
    (row.receipts.iter())
        .map(|k| RecentResult {
            match_id: k.match_id.to_string(),
            score: board.scores.show(k.receipt.submitted),
            update_applied: k.receipt.update_applied,
            review: k.receipt.review.map(|r| match r {
                Review::Held(_) => "HELD",
                Review::Rejected => "REJECTED",
            }),
        })
        .collect()
}

/// Up to `limit` of a game's held results (`game` empty: standalone boards'), oldest
/// first, after `cursor` (a `next_cursor` this service signed for the same game's
/// queue; any other is `invalid_cursor`), filtered by board and player. A match held on
/// many boards is listed once, where its first board's item falls, with every board that
/// held it in `boards`; a page may then list fewer than `limit`.
pub async fn list<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    game: &str,
    filter: &HeldFilter,
    cursor: Option<&str>,
    limit: u32,
) -> Result<QueuePage, ServiceError> {
    let scope = format!("held:{game}");
    let mut after: Option<String> = cursor.map(|c| signer.verify(&scope, c)).transpose()?;
    let mut held = Vec::new();
    // A page whose every item belongs to a match listed before lists nothing: go on,
    // a few pages at most.
    for _ in 0..PAGES_PER_LIST {
        let page = (ctx.store)
            .held_page(game, filter, Paging::new(after.as_deref(), limit))
            .await?;
        for h in matches_of(page.held) {
            let all = (ctx.store)
                .held_of_match(game, &h.player_id, &h.match_id, Some(h.held_at))
                .await?;
            let first = all.first().unwrap_or(&h);
            // Listed on an earlier page, where its first item the filter keeps was.
            let anchor = (all.iter())
                .find(|x| filter.board.as_ref().is_none_or(|b| b == &x.leaderboard_id))
                .unwrap_or(&h);
            if after
                .as_deref()
                .is_some_and(|a| anchor.queue_key().as_str() <= a)
            {
                continue;
            }
            held.push(view_of(ctx, first, &all).await?);
        }
        after = page.next;
        if !held.is_empty() || after.is_none() {
            break;
        }
    }
    Ok(QueuePage {
        held,
        next_cursor: after.map(|key| signer.sign(&scope, &key)),
    })
}

/// Pages of the queue one listing reads at most.
const PAGES_PER_LIST: usize = 5;

/// One held result per match (player and match id), in the order they first appear.
fn matches_of(held: Vec<HeldResult>) -> Vec<HeldResult> {
    let mut seen = std::collections::HashSet::new();
    (held.into_iter())
        .filter(|h| seen.insert((h.player_id.clone(), h.match_id.clone())))
        .collect()
}

/// The queue's view of a match held on the boards of `all` (`first`'s figures on top).
async fn view_of<S: IngestStore, I: RankIndex>(
    ctx: &Context<S, I>,
    first: &HeldResult,
    all: &[HeldResult],
) -> Result<HeldView, ServiceError> {
    let board = ctx
        .boards
        .current(&ctx.store, &first.leaderboard_id)
        .await?;
    let row = (ctx.store)
        .get_row(
            &first.leaderboard_id,
            &first.player_id,
            Consistency::Eventual,
        )
        .await?;
    let mut boards = Vec::with_capacity(all.len());
    for h in all {
        let b = ctx.boards.current(&ctx.store, &h.leaderboard_id).await?;
        boards.push(HeldBoard {
            id: h.id(),
            leaderboard_id: h.leaderboard_id.clone(),
            rule: h.rule.code(),
            value: figure(&b, h.rule, h.value),
            limit: figure(&b, h.rule, h.limit),
            standing: h.standing.map(|s| b.scores.show(s)),
        });
    }
    let h = first;
    let show = |s| board.scores.show(s);
    Ok(HeldView {
        id: h.id(),
        game: h.game.clone(),
        leaderboard_id: h.leaderboard_id.clone(),
        player_id: h.player_id.clone(),
        match_id: h.match_id.to_string(),
        score: show(h.score),
        subscores: board.scores.tiebreaks.shown(&h.ties),
        event_ts: h.event_ts.map(rfc3339_ms),
        held_at: rfc3339_ms(h.held_at),
        rule: h.rule.code(),
        value: figure(&board, h.rule, h.value),
        limit: figure(&board, h.rule, h.limit),
        standing: h.standing.map(show),
        metadata: h.metadata.as_ref().map(|m| m.to_object()),
        recent: recent_of(&board, &row),
        boards,
    })
}
