//! The whole board page by page, by keyset, with signed cursors.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::cache::cached;
use super::estimate::estimate;
use super::fallback::{degraded_by, history};
use super::reply::{Entry, PageReply, Provenance, Source};
use crate::board::Policy;
use crate::cursor::CursorSigner;
use crate::error::{DomainError, IndexError, ServiceError};
use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey};
use crate::score::Score;
use crate::service::Context;
use crate::service::hot::position_after;
use crate::store::{RankIndex, ScoreStore, TOP_WINDOW};
use crate::time::now_ms;

/// How far before a walk's start a standing may have been reached and still land in
/// Redis after the walk's first page (write-through or stream lag, p99 1 s).
pub const WALK_LAG_MS: i64 = 2_000;

/// What a `ranks` cursor carries: the last key read and when the walk started.
#[derive(Debug, Serialize, Deserialize)]
struct PageCursor {
    score: i64,
    reached_at: i64,
    player: String,
    since: i64,
}

/// One page of the whole board in rank order, by keyset: each page starts strictly
/// after the last key of the previous one, so concurrent writes never shift a walk.
/// A walk returns each player at most once: on boards where a score can get worse
/// (LATEST, SUM), later pages skip standings reached after the walk began (less
/// [`WALK_LAG_MS`], the index's lag budget: a write committed just before the walk may
/// reach Redis just after its first page), since such a player may already have been
/// returned at their earlier place.
#[instrument(skip(ctx, signer, cursor))]
pub async fn ranks<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    lb: &LeaderboardId,
    cursor: Option<&str>,
    limit: u64,
) -> Result<PageReply, ServiceError> {
    let key = format!("ranks|{lb}|{}|{limit}", cursor.unwrap_or_default());
    cached(&ctx.hot.pages, &ctx.last_known, key, false, || {
        ranks_fresh(ctx, signer, lb, cursor, limit)
    })
    .await
}

/// A page read from the board's top window when it lies inside it (`None`: it does not,
/// or the window moved while reading; read the index directly).
async fn page_from_window<S, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    after: Option<&RankKey>,
    limit: u64,
) -> Option<Result<(u64, Vec<RankKey>, u64), IndexError>> {
    let inside = match after {
        None => limit <= TOP_WINDOW,
        Some(a) => ctx.hot.windows.covers(lb, dir, a, limit),
    };
    if !inside {
        return None;
    }
    let w = match ctx.hot.windows.read(&ctx.index, lb, dir).await {
        Ok(Some(w)) => w,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let len = w.entries.len();
    let pos = after.map_or(0, |a| position_after(&w.entries, dir, a));
    let end = pos.saturating_add(limit as usize);
    // A short page is only the truth when the window holds the whole board.
    if end > len && len as u64 != w.total {
        return None;
    }
    let keys = w.entries[pos..end.min(len)].to_vec();
    Some(Ok((pos as u64, keys, w.total)))
}

async fn ranks_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    lb: &LeaderboardId,
    cursor: Option<&str>,
    limit: u64,
) -> Result<PageReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let dir = board.policy.direction();
    let scope = format!("ranks:{lb}");
    let now = now_ms();
    let cursor: Option<PageCursor> = cursor.map(|c| signer.verify(&scope, c)).transpose()?;
    let after = cursor
        .as_ref()
        .map(|c| {
            Ok::<_, DomainError>(RankKey {
                score: Score::new("cursor", c.score).map_err(|_| DomainError::InvalidCursor)?,
                reached_at: c.reached_at,
                player: c.player.clone(),
            })
        })
        .transpose()?;
    let since = cursor.as_ref().map_or(now, |c| c.since);
    let from_store = async |degraded| {
        let keys = ctx
            .store
            .ranked_after(lb, dir, after.as_ref(), limit)
            .await?;
        let (first, total, meta) = match keys.first() {
            Some(k) => {
                let est = estimate(&ctx.store, lb, dir, Some(k)).await?;
                let meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
                (est.before, est.total, meta)
            }
            None => (0, 0, Provenance::now(Source::Dynamodb, degraded)),
        };
        let more = keys.len() as u64 == limit;
        Ok::<_, ServiceError>((first, keys, total, more, meta))
    };
    let read = match page_from_window(ctx, lb, dir, after.as_ref(), limit).await {
        Some(read) => read,
        None => ctx.index.page(lb, dir, after.as_ref(), limit).await,
    };
    let (first, keys, total, more, meta) = match read {
        Ok((_, _, 0)) if history(&board) => from_store(false).await?,
        Ok((first, keys, total)) => {
            let more = first + (keys.len() as u64) < total;
            (
                first,
                keys,
                total,
                more,
                Provenance::now(Source::Redis, false),
            )
        }
        Err(e) => from_store(degraded_by(ctx, &board, &e).await).await?,
    };
    let next_cursor = keys.last().filter(|_| more).map(|k| {
        let c = PageCursor {
            score: k.score.get(),
            reached_at: k.reached_at,
            player: k.player.clone(),
            since,
        };
        signer.sign(&scope, &c)
    });
    let skip_newer = cursor.is_some() && matches!(board.policy, Policy::Latest | Policy::Sum);
    let entries = keys
        .into_iter()
        .zip(first + 1..)
        .filter(|(k, _)| !(skip_newer && k.reached_at > since - WALK_LAG_MS))
        .map(|(k, rank)| Entry::new(rank, k, None))
        .collect();
    Ok(PageReply {
        leaderboard_id: lb.clone(),
        total,
        entries,
        next_cursor,
        meta,
    })
}
