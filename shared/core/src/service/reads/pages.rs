//! The whole board page by page: keyset cursors both ways, a jump to any rank, and a walk
//! that never returns a player twice nor leaves one out in silence.
//!
//! # Walks
//! A walk is the pages read from one first page (the top, or `from_rank`) by following
//! `next_cursor` or `prev_cursor`. Every page starts strictly after (or before) the last
//! key the previous one read, so writes never shift a walk. What they can do is move a
//! player across the walk's position: a player read on page 1 who then falls below the
//! cursor would be read again, and one who rises past it is never met.
//!
//! The rank index stamps each entry with the time it took its current place, on the
//! clock of the server that holds the board (`TIME` inside the script that moves it), and
//! every page read returns that clock. The first page's clock is the walk's start
//! (`since`, carried in the cursor). On later pages an entry stamped at or after `since`
//! has moved during the walk: it is left out (it may have been returned at its old place)
//! and counted. An entry stamped before `since` has not moved since the walk began, so it
//! sits at one key for the whole walk and the keyset returns it exactly once. Hence:
//! - a board with no write after the walk's first page (however shortly before it the
//!   writes stopped) is returned whole, each player once, ranks consecutive;
//! - under writes, no player is returned twice and no player who did not move is missed;
//! - `moved` counts what the walk could not place: the players it left out, plus (walking
//!   forward) those who rose past its position unseen, found by position: the entries now
//!   ahead of the page's end that the walk neither returned nor left out.
//!
//! Stamps come from the index's own clock, not from the results' reach times (a result
//! may carry an old `event_ts`) nor from the caller's clock (write-through and stream lag
//! never matter: an entry is stamped when the index applies it). A rebuild stamps what it
//! loads, so a walk spanning a rebuild counts those entries as moved.
//!
//! A page served from DynamoDB (degraded) has no index stamps: an entry there counts as
//! moved when its reach time is at or after `since`. That is exact for a board whose
//! writes stopped before the walk; under writes, a result posted during a degraded walk
//! with an `event_ts` from before it is judged by that time (see `docs/walks.md`).

use crate::store::{IndexError, PageAt, RankIndex, ReadStore, Slice, TOP_WINDOW};
use leaderboard_rules::board::Board;
use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::fallback::{history, rank_order_after};
use super::hot_reads::cached;
use super::names::{self, Known};
use super::params::board_for;
use super::reply::{Entry, PageReply, Provenance, Source};
use super::store_pages::{Page, page_from_store};
use crate::service::Context;
use crate::service::ServiceError;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start, places};
use leaderboard_rules::score::Score;
use leaderboard_rules::tiebreak::Ties;

/// Where a `ranks` read starts: at the top, at a 1-based rank, or from a cursor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageStart<'a> {
    Top,
    /// `from_rank`.
    Rank(u64),
    /// `cursor` (a `next_cursor` or a `prev_cursor`).
    Cursor(&'a str),
}

/// What a `ranks` cursor carries: where the next page starts and the walk it belongs to.
#[derive(Debug, Serialize, Deserialize)]
struct PageCursor {
    /// The key the page starts after (walking back: before).
    score: i64,
    /// Its tie-break values, encoded (absent on a board without columns).
    #[serde(default, skip_serializing_if = "Ties::is_empty")]
    ties: Ties,
    reached_at: i64,
    player: String,
    /// Walking back, toward the top.
    back: bool,
    /// When the walk began, in microseconds on the clock of the index that served its
    /// first page.
    since_us: i64,
    /// Players the walk returned and left out so far.
    returned: u64,
    left_out: u64,
    /// Entries ahead of the walk's first page when it was read (walking forward, the
    /// entries it covers are counted from there).
    origin: u64,
}

impl PageCursor {
    /// The key the page starts from.
    fn key(&self) -> Result<RankKey, DomainError> {
        Ok(RankKey {
            score: Score::new("cursor", self.score).map_err(|_| DomainError::InvalidCursor)?,
            ties: self.ties.clone(),
            reached_at: self.reached_at,
            player: self.player.clone(),
        })
    }
}

/// One page of a walk from the top (`cursor` `None`) or on from a cursor.
pub async fn ranks<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    lb: &LeaderboardId,
    cursor: Option<&str>,
    limit: u64,
    mode: RankMode,
) -> Result<PageReply, ServiceError> {
    let start = cursor.map_or(PageStart::Top, PageStart::Cursor);
    ranks_from(ctx, signer, lb, start, limit, mode).await
}

/// One page of the whole board in rank order (see the module's doc on walks).
#[instrument(skip(ctx, signer))]
pub async fn ranks_from<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    lb: &LeaderboardId,
    start: PageStart<'_>,
    limit: u64,
    mode: RankMode,
) -> Result<PageReply, ServiceError> {
    // Each kind of start has its own tag, so no cursor string can name another page's
    // cache entry (a `#5` cursor was once `from_rank=5`'s page, an empty one the top).
    let from = match start {
        PageStart::Top => "top".to_owned(),
        PageStart::Rank(r) => format!("rank:{r}"),
        PageStart::Cursor(c) => format!("cursor:{c}"),
    };
    let key = format!("ranks|{lb}|{from}|{limit}|{}", mode.as_str());
    cached(
        (&ctx.hot.pages, &ctx.last_known),
        (&ctx.boards, lb),
        key,
        false,
        || {
            ranks_fresh(
                ctx,
                signer,
                PageAsk {
                    lb,
                    start,
                    limit,
                    mode,
                },
            )
        },
    )
    .await
}

/// One page asked of a board: where it starts, how long, under which rank mode.
#[derive(Clone, Copy)]
struct PageAsk<'a> {
    lb: &'a LeaderboardId,
    start: PageStart<'a>,
    limit: u64,
    mode: RankMode,
}

/// A first page read from the board's top window when it lies inside it (`None`: it
/// does not, or the window moved while reading; read the index directly). The window
/// starts at the top, so it places the page's first entry itself.
async fn page_from_window<S, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    from: u64,
    limit: u64,
    mode: RankMode,
) -> Option<Result<Slice, IndexError>> {
    if from.saturating_add(limit) > TOP_WINDOW {
        return None;
    }
    let named = from.saturating_add(limit);
    let w = match ctx.hot.windows.read(&ctx.index, lb, dir, named).await {
        Ok(Some(w)) => w,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    let len = w.entries.len();
    let pos = (from as usize).min(len);
    let end = pos.saturating_add(limit as usize);
    // A short page is only the truth when the window holds the whole board.
    if end > len && len as u64 != w.total {
        return None;
    }
    let first_place = match pos < len {
        true => places(mode, Start::TOP, &w.entries[..=pos])[pos],
        false => 1,
    };
    let entries = w.entries[pos..end.min(len)].to_vec();
    // The window's cards are its first `named` entries'; the page is their tail.
    let (cards, metadata) = (
        tail(w.cards, pos, end.min(len)),
        tail(w.metadata, pos, end.min(len)),
    );
    Some(Ok(Slice {
        before: pos as u64,
        first_place,
        // A first page leaves nothing out: its stamps are never compared.
        stamps: vec![0; entries.len()],
        entries,
        total: w.total,
        clock: w.clock,
        cards,
        metadata,
    }))
}

/// What the window read for its first entries, cut to the page `[pos, end)`.
fn tail<T: Clone>(named: Option<Vec<T>>, pos: usize, end: usize) -> Option<Vec<T>> {
    named
        .filter(|c| c.len() >= end)
        .map(|c| c[pos..end].to_vec())
}

async fn ranks_fresh<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    signer: &CursorSigner,
    ask: PageAsk<'_>,
) -> Result<PageReply, ServiceError> {
    let PageAsk {
        lb,
        start,
        limit,
        mode,
    } = ask;
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let scope = format!("ranks:{lb}");
    let cursor: Option<PageCursor> = match start {
        PageStart::Cursor(c) => Some(signer.verify(&scope, c)?),
        _ => None,
    };
    let key = cursor.as_ref().map(PageCursor::key).transpose()?;
    let at = match (&start, &cursor, &key) {
        (_, Some(c), Some(k)) if c.back => PageAt::Before(k),
        (_, Some(_), Some(k)) => PageAt::After(k),
        (PageStart::Rank(r), _, _) => PageAt::Rank(r.saturating_sub(1)),
        _ => PageAt::Top,
    };
    let read = match at {
        PageAt::Top => page_from_window(ctx, lb, dir, 0, limit, mode).await,
        PageAt::Rank(r) => page_from_window(ctx, lb, dir, r, limit, mode).await,
        _ => None,
    };
    let read = match read {
        Some(read) => read,
        None => {
            ctx.index
                .page(BoardOrder::new(lb, dir), at, limit, mode)
                .await
        }
    };
    let mut known = Known::default();
    let page = match read {
        Ok(Slice { total: 0, .. }) if history(&board) => {
            page_from_store(ctx, lb, dir, at, limit, mode, false).await?
        }
        Ok(s) => {
            known = names::known(&s.entries, s.cards, s.metadata);
            Page {
                start: Start {
                    rank: s.before + 1,
                    place: s.first_place,
                },
                keys: s.entries,
                stamps: s.stamps,
                clock: s.clock,
                total: s.total,
                more_after: None,
                meta: Provenance::now(Source::Redis, false),
            }
        }
        Err(e) => {
            let degraded = rank_order_after(ctx, &board, &e).await?;
            page_from_store(ctx, lb, dir, at, limit, mode, degraded).await?
        }
    };
    let from_index = page.meta.source == Source::Redis;
    let mut reply = walk_on(signer, &scope, &board, mode, cursor, page);
    reply.meta.names_missing = !names::name(ctx, lb, &mut reply.entries, known, from_index).await;
    Ok(reply)
}

/// The reply for `page`, the next page of the walk `cursor` belongs to (a new walk's
/// first page when `None`): its rows without the entries that moved during the walk,
/// its counts, and the cursors on.
fn walk_on(
    signer: &CursorSigner,
    scope: &str,
    board: &Board,
    mode: RankMode,
    cursor: Option<PageCursor>,
    page: Page,
) -> PageReply {
    let since = cursor.as_ref().map_or(page.clock, |c| c.since_us);
    let origin = cursor.as_ref().map_or(page.start.rank - 1, |c| c.origin);
    let (mut returned, mut left_out) = cursor.as_ref().map_or((0, 0), |c| (c.returned, c.left_out));
    let ranks = places(mode, page.start, &page.keys);
    let mut entries = Vec::with_capacity(page.keys.len());
    for ((key, stamp), rank) in page.keys.iter().zip(&page.stamps).zip(ranks) {
        if cursor.is_some() && *stamp >= since {
            left_out += 1;
        } else {
            returned += 1;
            entries.push(Entry::new(rank, key.clone(), None, board.scores));
        }
    }
    let read = page.keys.len() as u64;
    let first_rank = page.start.rank;
    let back = cursor.as_ref().is_some_and(|c| c.back);
    // Walking forward, the entries now ahead of the page's end that the walk neither
    // returned nor left out rose past it unseen (countable only where ranks are exact).
    let risen = match back || page.meta.rank_approximate {
        false => (first_rank - 1 + read)
            .saturating_sub(origin)
            .saturating_sub(returned + left_out),
        true => 0,
    };
    let moved = left_out + risen;
    let cursor_at = |key: &RankKey, back: bool| {
        let c = PageCursor {
            score: key.score.get(),
            ties: key.ties.clone(),
            reached_at: key.reached_at,
            player: key.player.clone(),
            back,
            since_us: since,
            returned,
            left_out: left_out + risen,
            origin,
        };
        signer.sign(scope, &c)
    };
    let more_after = page
        .more_after
        .unwrap_or(first_rank - 1 + read < page.total);
    let next_cursor = page
        .keys
        .last()
        .filter(|_| more_after)
        .map(|k| cursor_at(k, false));
    let prev_cursor = page
        .keys
        .first()
        .filter(|_| first_rank > 1)
        .map(|k| cursor_at(k, true));
    PageReply {
        leaderboard_id: board.leaderboard_id.clone(),
        rank_mode: mode,
        total: page.total,
        entries,
        moved,
        next_cursor,
        prev_cursor,
        meta: page.meta,
    }
}
