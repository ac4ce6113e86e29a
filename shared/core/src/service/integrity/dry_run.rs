//! The dry run: which of a board's current standings a candidate rule set would have
//! held, so a team can tune its rules before turning them on (docs/integrity.md).
//!
//! Each of the board's best `limit` standings is judged as the result that set it: its
//! score; the standing before it (the previous score its receipt kept, while the row
//! keeps that receipt); the results the player sent in the minute before it (from the
//! row's receipts); the duration its metadata says; and the board's top without the
//! player: the best other standing the rules keep (the board as it would have been). One index read and one eventually consistent row read
//! per standing; DynamoDB's rank order when the index cannot answer.

use leaderboard_rules::order::BoardOrder;
use serde::Serialize;
use tracing::warn;

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{Consistency, RankIndex, ReadStore, Row};
use leaderboard_rules::board::Board;
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::integrity::{Candidate, DURATION_FIELD, IntegrityBody};

/// The most standings one dry run judges.
pub const MAX_DRY_RUN: u64 = 1_000;

/// A standing the rules would have held.
#[derive(Debug, Serialize)]
pub struct WouldHold {
    pub rank: u64,
    pub player_id: PlayerId,
    pub score: Shown,
    pub match_id: String,
    pub rule: &'static str,
    pub value: serde_json::Value,
    pub limit: serde_json::Value,
}

/// What a dry run found.
#[derive(Debug, Serialize)]
pub struct DryRunReply {
    pub leaderboard_id: LeaderboardId,
    /// The standings judged (the board's best, at most the limit asked).
    pub checked: u64,
    pub total: u64,
    pub would_hold: Vec<WouldHold>,
}

/// The receipt times of `row`'s results, s: a receipt is kept `ttl_s` from its write.
fn written_at(
    row: &Row,
    ttl_s: i64,
) -> impl Iterator<Item = (&leaderboard_rules::ids::MatchId, i64)> {
    (row.receipts.iter()).map(move |k| (&k.match_id, k.expires_at - ttl_s))
}

/// Judges the board's best `limit` standings by the rules in `body`.
pub async fn dry_run<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    body: serde_json::Value,
    limit: u64,
) -> Result<DryRunReply, ServiceError> {
    let board: Board = ctx.boards.current(&ctx.store, lb).await?;
    let rules = IntegrityBody::read(body)?.validate(board.scores.decimals)?;
    let dir = board.policy.direction();
    let n = limit.clamp(1, MAX_DRY_RUN);
    // The index unable to say (down, or the board not ready): DynamoDB's rank order, as
    // a degraded read finds it.
    let (keys, total) = match ctx.index.top(BoardOrder::new(lb, dir), n).await {
        Ok(found) => found,
        Err(error) => {
            warn!(board = %lb, %error, "dry run reads the board from DynamoDB");
            let (keys, est) = crate::service::reads::best_from_store(ctx, lb, dir, n).await?;
            (keys, est.total)
        }
    };
    let ttl_s = ctx.settings.receipt_ttl.as_secs() as i64;
    let mut judged = Vec::with_capacity(keys.len());
    for key in &keys {
        let player = PlayerId::parse(&key.player)?;
        let row = (ctx.store)
            .get_row(lb, &player, Consistency::Eventual)
            .await?;
        let Some(standing) = row.standing.clone() else {
            continue;
        };
        let last = &standing.last_match_id;
        let at = written_at(&row, ttl_s)
            .find(|(m, _)| *m == last)
            .map(|(_, t)| t);
        let recent = at.map_or(0, |t| {
            written_at(&row, ttl_s)
                .filter(|(m, w)| *m != last && *w <= t && *w > t - 60)
                .count() as u32
        });
        let candidate = Candidate {
            policy: board.policy,
            score: standing.score,
            current: row.kept_receipt(last).and_then(|r| r.previous_score),
            next: Some(standing.score),
            recent,
            top: None,
            duration_ms: (standing.metadata.as_ref())
                .and_then(|m| m.to_object().get(DURATION_FIELD)?.as_i64()),
        };
        judged.push((player, standing, candidate));
    }
    // First every rule but the top's; then the top's, against the best other standing
    // the rules keep (the board as it would have been).
    let mut tripped: Vec<_> = judged.iter().map(|(_, _, c)| rules.judge(c)).collect();
    let kept: Vec<usize> = (0..judged.len())
        .filter(|i| tripped[*i].is_none())
        .collect();
    for &i in &kept {
        let top = (kept.iter()).find(|j| **j != i).map(|j| judged[*j].1.score);
        let (_, _, c) = &judged[i];
        tripped[i] = rules.judge(&Candidate { top, ..*c });
    }
    let mut would_hold = Vec::new();
    for (i, ((player, standing, _), t)) in judged.into_iter().zip(tripped).enumerate() {
        if let Some(t) = t {
            would_hold.push(WouldHold {
                rank: i as u64 + 1,
                player_id: player,
                score: board.scores.show(standing.score),
                match_id: standing.last_match_id.to_string(),
                rule: t.rule.code(),
                value: super::queue::figure(&board, t.rule, t.value),
                limit: super::queue::figure(&board, t.rule, t.limit),
            });
        }
    }
    Ok(DryRunReply {
        leaderboard_id: lb.clone(),
        checked: keys.len() as u64,
        total,
        would_hold,
    })
}
