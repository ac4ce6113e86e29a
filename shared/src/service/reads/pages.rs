//! The whole board page by page, by keyset, with signed cursors.

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::cache::cached;
use super::estimate::{estimate, place};
use super::fallback::{degraded_by, history};
use super::params::board_for;
use super::reply::{Entry, PageReply, Provenance, Source};
use crate::board::Policy;
use crate::cursor::CursorSigner;
use crate::error::{DomainError, IndexError, ServiceError};
use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey, RankMode, Start, places, position_after};
use crate::score::Score;
use crate::service::Context;
use crate::store::{RankIndex, ScoreStore, Slice, TOP_WINDOW};
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

impl PageCursor {
    /// The cursor after `key`, of a walk that started at `since`.
    fn at(key: &RankKey, since: i64) -> Self {
        Self {
            score: key.score.get(),
            reached_at: key.reached_at,
            player: key.player.clone(),
            since,
        }
    }

    /// The last key the previous page read.
    fn key(&self) -> Result<RankKey, DomainError> {
        Ok(RankKey {
            score: Score::new("cursor", self.score).map_err(|_| DomainError::InvalidCursor)?,
            reached_at: self.reached_at,
            player: self.player.clone(),
        })
    }
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
    mode: RankMode,
) -> Result<PageReply, ServiceError> {
    let key = format!(
        "ranks|{lb}|{}|{limit}|{}",
        cursor.unwrap_or_default(),
        mode.as_str()
    );
    cached(&ctx.hot.pages, &ctx.last_known, key, false, || {
        ranks_fresh(ctx, signer, lb, cursor, limit, mode)
    })
    .await
}

/// A page read from the board's top window when it lies inside it (`None`: it does not,
/// or the window moved while reading; read the index directly). The window starts at
/// the top, so it places the page's first entry itself.
async fn page_from_window<S, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    after: Option<&RankKey>,
    limit: u64,
    mode: RankMode,
) -> Option<Result<Slice, IndexError>> {
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
    let first_place = match pos < len {
        true => places(mode, Start::TOP, &w.entries[..=pos])[pos],
        false => 1,
    };
    Some(Ok(Slice {
        before: pos as u64,
        first_place,
        entries: w.entries[pos..end.min(len)].to_vec(),
        total: w.total,
    }))
}

async fn ranks_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    lb: &LeaderboardId,
    cursor: Option<&str>,
    limit: u64,
    mode: RankMode,
) -> Result<PageReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let scope = format!("ranks:{lb}");
    let cursor: Option<PageCursor> = cursor.map(|c| signer.verify(&scope, c)).transpose()?;
    let after = cursor.as_ref().map(PageCursor::key).transpose()?;
    let since = cursor.as_ref().map_or(now_ms(), |c| c.since);
    let read = match page_from_window(ctx, lb, dir, after.as_ref(), limit, mode).await {
        Some(read) => read,
        None => ctx.index.page(lb, dir, after.as_ref(), limit, mode).await,
    };
    let page = match read {
        Ok(Slice { total: 0, .. }) if history(&board) => {
            page_from_store(ctx, lb, dir, after.as_ref(), limit, mode, false).await?
        }
        Ok(s) => Page {
            more: s.before + (s.entries.len() as u64) < s.total,
            start: Start {
                rank: s.before + 1,
                place: s.first_place,
            },
            keys: s.entries,
            total: s.total,
            meta: Provenance::now(Source::Redis, false),
        },
        Err(e) => {
            let degraded = degraded_by(ctx, &board, &e).await;
            page_from_store(ctx, lb, dir, after.as_ref(), limit, mode, degraded).await?
        }
    };
    let next_cursor = page
        .keys
        .last()
        .filter(|_| page.more)
        .map(|k| signer.sign(&scope, &PageCursor::at(k, since)));
    let skip_newer = cursor.is_some() && matches!(board.policy, Policy::Latest | Policy::Sum);
    let ranks = places(mode, page.start, &page.keys);
    let entries = page
        .keys
        .into_iter()
        .zip(ranks)
        .filter(|(k, _)| !(skip_newer && k.reached_at > since - WALK_LAG_MS))
        .map(|(k, rank)| Entry::new(rank, k, None))
        .collect();
    Ok(PageReply {
        leaderboard_id: lb.clone(),
        rank_mode: mode,
        total: page.total,
        entries,
        next_cursor,
        meta: page.meta,
    })
}

/// A page as read, before it becomes a reply.
struct Page {
    /// Where the page's first key stands.
    start: Start,
    keys: Vec<RankKey>,
    total: u64,
    /// Whether a next page exists.
    more: bool,
    meta: Provenance,
}

/// A page read from DynamoDB's rank-ordered index.
async fn page_from_store<S: ScoreStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    after: Option<&RankKey>,
    limit: u64,
    mode: RankMode,
    degraded: bool,
) -> Result<Page, ServiceError> {
    let keys = ctx.store.ranked_after(lb, dir, after, limit).await?;
    let (start, total, meta) = match keys.first() {
        Some(k) => {
            let est = estimate(&ctx.store, lb, dir, Some(k)).await?;
            let (first_place, approximate) = place(&ctx.store, lb, dir, k, &est, mode).await?;
            let mut meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
            meta.rank_approximate = approximate;
            let start = Start {
                rank: est.before + 1,
                place: first_place,
            };
            (start, est.total, meta)
        }
        None => (Start::TOP, 0, Provenance::now(Source::Dynamodb, degraded)),
    };
    Ok(Page {
        more: keys.len() as u64 == limit,
        start,
        keys,
        total,
        meta,
    })
}
