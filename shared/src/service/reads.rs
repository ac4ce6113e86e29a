//! Ranked reads: a player's rank with neighbours, the top of a board, a player's place
//! among friends, and the whole board page by page. Each is one Redis round trip (plus
//! the board definition, cached per container).
//!
//! When Redis cannot answer (down, slow, breaker open) or does not hold the board
//! completely (wiped, rebuilding), the same read is answered from DynamoDB's
//! rank-ordered index, flagged `degraded: true`, `source: "dynamodb"`. Closed windows
//! whose Redis keys have expired are read from DynamoDB as a matter of course (not
//! degraded). If DynamoDB fails too, the container's last good answer to the same read
//! is served with `stale_ms`; with none, the error (503 with Retry-After).

use std::any::Any;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tracing::{instrument, warn};

use super::Context;
use super::boards::TtlCache;
use super::hot::{Caller, ReadCache, TopWindows, position_after};
use crate::board::{Board, BoardStatus, Policy};
use crate::cursor::CursorSigner;
use crate::error::{DomainError, IndexError, ServiceError};
use crate::ids::{LeaderboardId, PlayerId};
use crate::order::{Direction, RankKey};
use crate::score::Score;
use crate::store::{Around, FriendsSource, Health, RankIndex, RateCounter, ScoreStore, TOP_WINDOW};
use crate::time::{now_ms, rfc3339_ms};

/// Neighbours on each side when `k` is not given.
pub const DEFAULT_K: u64 = 5;
/// Largest `k` accepted.
pub const MAX_K: u64 = 50;
/// Entries in a top read when `n` is not given.
pub const DEFAULT_N: u64 = 10;
/// Larger `n` are clamped to this.
pub const MAX_N: u64 = 1000;

/// Where a read was answered from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Redis,
    /// DynamoDB's rank-ordered index.
    Dynamodb,
    /// This container's last good answer to the same read.
    Cache,
}

/// How a reply was produced; flattened into every read reply.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Provenance {
    pub as_of: String,
    pub source: Source,
    /// The normal source could not answer; this answer is correct but came another way.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub degraded: bool,
    /// For a cached answer: how old it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stale_ms: Option<u64>,
    /// The ranks are estimates: a big board read from DynamoDB, where counting every
    /// entry before a player would cost in proportion to the rank (see [`COUNT_CAP`]).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rank_approximate: bool,
    /// The total is an estimate, for the same reason.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub total_approximate: bool,
}

impl Provenance {
    fn now(source: Source, degraded: bool) -> Self {
        Self {
            as_of: rfc3339_ms(now_ms()),
            source,
            degraded,
            stale_ms: None,
            rank_approximate: false,
            total_approximate: false,
        }
    }

    fn estimated(mut self, est: &Estimate) -> Self {
        self.rank_approximate = est.rank_approximate;
        self.total_approximate = est.total_approximate;
        self
    }
}

/// Entries a count served from DynamoDB reads at most, across the board's 16 shards.
/// Below it counts are exact (the best few thousand players get their exact rank); past
/// it a rank or total is estimated from the board's rank sketch. So a read served from
/// DynamoDB costs a bounded amount whatever the board's size (the README states the bound
/// in read capacity units).
pub const COUNT_CAP: u64 = 4_096;

/// Where a key stands on a board read from DynamoDB: counted while cheap, estimated from
/// the board's sketch past [`COUNT_CAP`].
struct Estimate {
    /// Entries before the key.
    before: u64,
    total: u64,
    rank_approximate: bool,
    total_approximate: bool,
}

/// The entries before `key` (none asked for: 0) and the board's size, from DynamoDB.
/// A rank past the cap needs the board's sketch (none yet: `rank_unavailable`); a total
/// past it is the sketch's, or the lower bound counted when there is none.
async fn estimate<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    key: Option<&RankKey>,
) -> Result<Estimate, ServiceError> {
    let none = crate::store::Count { n: 0, exact: true };
    let (before, total) = futures::try_join!(
        async {
            match key {
                Some(k) => store.count_before(lb, dir, Some(k), COUNT_CAP).await,
                None => Ok(none),
            }
        },
        store.count_before(lb, dir, None, COUNT_CAP),
    )?;
    if before.exact && total.exact {
        return Ok(Estimate {
            before: before.n,
            total: total.n,
            rank_approximate: false,
            total_approximate: false,
        });
    }
    let sketch = store.get_sketch(lb).await?;
    let before_n = match (before.exact, key, &sketch) {
        (true, _, _) | (_, None, _) => before.n,
        (false, Some(k), Some(sk)) => sk.before(&k.sort_key(dir)).max(before.n),
        (false, Some(_), None) => return Err(ServiceError::RankUnavailable(lb.clone())),
    };
    let total_n = match (&sketch, total.exact) {
        (_, true) => total.n,
        (Some(sk), false) => sk.total.max(total.n),
        (None, false) => total.n,
    };
    Ok(Estimate {
        before: before_n,
        total: total_n.max(before_n + u64::from(key.is_some())),
        rank_approximate: !before.exact,
        total_approximate: !total.exact,
    })
}

/// A read reply that carries its [`Provenance`].
pub trait Answer: Clone + Send + Sync + 'static {
    fn provenance(&mut self) -> &mut Provenance;
}

/// The last good answer of each read this container served, for when both Redis and
/// DynamoDB fail. Bounded in size and age.
pub struct LastKnown(TtlCache<String, (Arc<dyn Any + Send + Sync>, i64)>);

/// How old a last-known answer may be.
pub const LAST_KNOWN_TTL: Duration = Duration::from_secs(600);

impl Default for LastKnown {
    fn default() -> Self {
        Self(TtlCache::bounded(LAST_KNOWN_TTL, 10_000))
    }
}

impl LastKnown {
    fn remember<T: Answer>(&self, key: String, reply: &T) {
        self.0.put(key, (Arc::new(reply.clone()), now_ms()));
    }

    fn recall<T: Answer>(&self, key: &str) -> Option<T> {
        let (any, at) = self.0.get(&key.to_owned())?;
        let mut reply = any.downcast_ref::<T>()?.clone();
        let p = reply.provenance();
        p.source = Source::Cache;
        p.degraded = true;
        p.stale_ms = Some((now_ms() - at).max(0) as u64);
        Some(reply)
    }

    /// Keeps a fresh answer, or answers from memory when the backends are unavailable.
    fn settle<T: Answer>(
        &self,
        key: String,
        result: Result<T, ServiceError>,
    ) -> Result<T, ServiceError> {
        match result {
            Ok(reply) => {
                self.remember(key, &reply);
                Ok(reply)
            }
            Err(
                e @ (ServiceError::Store(_)
                | ServiceError::Index(_)
                | ServiceError::Friends(_)
                | ServiceError::RankUnavailable(_)),
            ) => match self.recall(&key) {
                Some(reply) => {
                    warn!(error = %e, key, "backends unavailable; serving the last known answer");
                    Ok(reply)
                }
                None => Err(e),
            },
            Err(e) => Err(e),
        }
    }
}

/// The hot-spot protection of the reads: one short-TTL reply cache per read kind and
/// the top windows of the boards this container serves (see [`super::hot`]).
pub struct HotReads {
    rank: ReadCache<RankReply>,
    top: ReadCache<TopReply>,
    friends: ReadCache<FriendsReply>,
    pages: ReadCache<PageReply>,
    pub windows: TopWindows,
}

impl HotReads {
    pub fn new(ttl: Duration) -> Self {
        Self {
            rank: ReadCache::new(ttl),
            top: ReadCache::new(ttl),
            friends: ReadCache::new(ttl),
            pages: ReadCache::new(ttl),
            windows: TopWindows::default(),
        }
    }
}

/// Serves a read through its reply cache (unless `bypass`), falling back to the last
/// known answer when the backends fail. A reply served from the cache says
/// `source: "cache"` and keeps the `as_of` of the read that produced it.
async fn cached<T, F, Fut>(
    cache: &ReadCache<T>,
    last_known: &LastKnown,
    key: String,
    bypass: bool,
    load: F,
) -> Result<T, ServiceError>
where
    T: Answer,
    F: FnOnce() -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    // Boxed: the load is a deep state machine of its own, and nesting it inline makes
    // the handlers' futures too deep for the compiler's layout queries in release.
    let settle = async |key: String| last_known.settle(key, Box::pin(load()).await);
    if bypass {
        return settle(key).await;
    }
    let (mut reply, hit) = cache.get_or_load(key.clone(), || settle(key)).await?;
    if hit {
        reply.provenance().source = Source::Cache;
    }
    Ok(reply)
}

/// What a read about one player names: the board, the player, `k`, and who asks.
pub struct PlayerRead {
    pub lb: LeaderboardId,
    pub player: PlayerId,
    pub k: u64,
    pub caller: Caller,
}

impl PlayerRead {
    /// Decodes `GET /leaderboards/{lb}/players/{p}/...?k=` and, once it is valid, counts
    /// it against the caller's rate limits.
    pub async fn admit<S, I: RateCounter>(
        ctx: &Context<S, I>,
        req: &crate::http::Request,
    ) -> Result<Self, ServiceError> {
        let read = Self {
            lb: crate::http::path(req, "lb", LeaderboardId::parse)?,
            player: crate::http::path(req, "p", PlayerId::parse)?,
            k: parse_k(crate::http::query(req, "k"))?,
            caller: crate::http::caller(req),
        };
        admit(ctx, &read.caller).await?;
        Ok(read)
    }
}

/// Counts the read against the caller's rate limits; 429 `rate_limited` when over.
pub async fn admit<S, I: RateCounter>(
    ctx: &Context<S, I>,
    caller: &Caller,
) -> Result<(), ServiceError> {
    ctx.settings.rate_limits.check(&ctx.index, caller).await
}

/// True for boards whose reads go to DynamoDB when Redis has nothing: closed windows
/// (their keys expire after the retention period).
fn history(board: &Board) -> bool {
    board.window.is_some() && board.effective_status(now_ms()) == BoardStatus::Closed
}

/// Whether falling back to DynamoDB after `err` is a degradation (it is not for a
/// closed window whose keys expired as intended), logging it when it is. A board whose
/// index is not ready is reported for repair.
async fn degraded_by<S, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    err: &IndexError,
) -> bool {
    let expected = history(board) && matches!(err, IndexError::NotReady(Health::Missing));
    if expected {
        return false;
    }
    warn!(board = %board.leaderboard_id, error = %err, "rank index unavailable; reading DynamoDB");
    if let IndexError::NotReady(health) = err {
        ctx.repairs
            .report(&ctx.index, &board.leaderboard_id, *health)
            .await;
    }
    true
}

/// Parses `k` (0..=50, default 5).
pub fn parse_k(raw: Option<&str>) -> Result<u64, DomainError> {
    let Some(raw) = raw else { return Ok(DEFAULT_K) };
    match raw.parse::<u64>() {
        Ok(k) if k <= MAX_K => Ok(k),
        _ => Err(DomainError::invalid(
            "k",
            format!("must be an integer from 0 to {MAX_K}"),
        )),
    }
}

/// Parses `n` (at least 1, default 10, clamped to 1000).
pub fn parse_n(raw: Option<&str>) -> Result<u64, DomainError> {
    let Some(raw) = raw else { return Ok(DEFAULT_N) };
    match raw.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n.min(MAX_N)),
        // Digits too long for u64 are still a valid, very large n.
        Err(_) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(MAX_N),
        _ => Err(DomainError::invalid(
            "n",
            "must be an integer of at least 1",
        )),
    }
}

/// Default and largest page of `GET /leaderboards/{lb}/ranks`.
pub const DEFAULT_PAGE: u64 = 100;
pub const MAX_PAGE: u64 = 1000;

/// Parses `limit` (1..=1000, default 100).
pub fn parse_limit(raw: Option<&str>) -> Result<u64, DomainError> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_PAGE);
    };
    raw.parse::<u64>()
        .ok()
        .filter(|l| (1..=MAX_PAGE).contains(l))
        .ok_or_else(|| DomainError::invalid("limit", format!("must be 1 to {MAX_PAGE}")))
}

/// One ranked row.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Entry {
    pub rank: u64,
    pub player_id: String,
    pub score: i64,
    pub updated_at: String,
    /// True on the requesting player's own row.
    #[serde(rename = "self")]
    pub is_self: bool,
}

impl Entry {
    fn new(rank: u64, key: RankKey, me: Option<&PlayerId>) -> Self {
        Self {
            rank,
            is_self: me.is_some_and(|p| p.as_str() == key.player),
            score: key.score.get(),
            updated_at: rfc3339_ms(key.reached_at),
            player_id: key.player,
        }
    }
}

fn entries(first_rank: u64, keys: Vec<RankKey>, me: Option<&PlayerId>) -> Vec<Entry> {
    keys.into_iter()
        .zip(first_rank..)
        .map(|(key, rank)| Entry::new(rank, key, me))
        .collect()
}

/// Reply of `GET /leaderboards/{lb}/players/{p}/rank`.
#[derive(Debug, Clone, Serialize)]
pub struct RankReply {
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    pub score: i64,
    pub rank: u64,
    pub total: u64,
    pub updated_at: String,
    /// Up to k rows above and k below, the player's own row included and flagged.
    pub neighbours: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/top`.
#[derive(Debug, Clone, Serialize)]
pub struct TopReply {
    pub leaderboard_id: LeaderboardId,
    pub total: u64,
    pub entries: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/players/{p}/friends-rank`.
#[derive(Debug, Clone, Serialize)]
pub struct FriendsReply {
    pub leaderboard_id: LeaderboardId,
    pub player_id: PlayerId,
    /// The player's 1-based place in the group; `null` if the player has no score.
    pub friends_rank: Option<u64>,
    /// Size of the group: the player and the friends who have a score.
    pub friends_total: u64,
    /// k rows around the player, or the group's top 2k+1 if the player has no score.
    /// `rank` in these rows is the place within the group.
    pub entries: Vec<Entry>,
    #[serde(flatten)]
    pub meta: Provenance,
}

/// Reply of `GET /leaderboards/{lb}/ranks`.
#[derive(Debug, Clone, Serialize)]
pub struct PageReply {
    pub leaderboard_id: LeaderboardId,
    pub total: u64,
    pub entries: Vec<Entry>,
    /// Pass back as `cursor` for the next page; `null` after the last page.
    pub next_cursor: Option<String>,
    #[serde(flatten)]
    pub meta: Provenance,
}

macro_rules! answer {
    ($($t:ty),*) => {$(
        impl Answer for $t {
            fn provenance(&mut self) -> &mut Provenance {
                &mut self.meta
            }
        }
    )*};
}
answer!(RankReply, TopReply, FriendsReply, PageReply);

/// The player's rank, score and up to `k` neighbours on each side. The player's own
/// read skips the reply cache, so it always shows their latest write.
#[instrument(skip(ctx))]
pub async fn rank<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<RankReply, ServiceError> {
    let key = format!("rank|{lb}|{player}|{k}");
    cached(
        &ctx.hot.rank,
        &ctx.last_known,
        key,
        caller.is(player),
        || rank_fresh(ctx, lb, player, k),
    )
    .await
}

async fn rank_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<RankReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let dir = board.policy.direction();
    let not_ranked = || ServiceError::NotRanked {
        lb: lb.clone(),
        player: player.clone(),
    };
    let (around, meta) = match ctx.index.around(lb, dir, player, k).await {
        Ok(Some(a)) => (Some(a), Provenance::now(Source::Redis, false)),
        Ok(None) if !history(&board) => return Err(not_ranked()),
        Ok(None) => (
            around_from_store(&ctx.store, lb, dir, player, k).await?,
            Provenance::now(Source::Dynamodb, false),
        ),
        Err(e) => (
            around_from_store(&ctx.store, lb, dir, player, k).await?,
            Provenance::now(Source::Dynamodb, degraded_by(ctx, &board, &e).await),
        ),
    };
    let around = around.ok_or_else(not_ranked)?;
    let meta = Provenance {
        rank_approximate: around.rank_approximate,
        total_approximate: around.total_approximate,
        ..meta
    };
    let neighbours = entries(around.first_rank, around.entries, Some(player));
    let me = neighbours
        .iter()
        .find(|e| e.is_self)
        .ok_or_else(not_ranked)?;
    Ok(RankReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        score: me.score,
        rank: around.rank,
        total: around.total,
        updated_at: me.updated_at.clone(),
        meta,
        neighbours,
    })
}

/// The player's slice of a board, from DynamoDB.
async fn around_from_store<S: ScoreStore>(
    store: &S,
    lb: &LeaderboardId,
    dir: Direction,
    player: &PlayerId,
    k: u64,
) -> Result<Option<Around>, ServiceError> {
    let Some(standing) = store.get_standing(lb, player).await? else {
        return Ok(None);
    };
    let me = RankKey {
        score: standing.score,
        reached_at: standing.reached_at,
        player: player.to_string(),
    };
    let (above, below, est) = futures::try_join!(
        async { Ok::<_, ServiceError>(store.ranked_before(lb, dir, &me, k).await?) },
        async { Ok(store.ranked_after(lb, dir, Some(&me), k).await?) },
        estimate(store, lb, dir, Some(&me)),
    )?;
    let first_rank = est.before + 1 - above.len() as u64;
    let entries = above.into_iter().chain([me]).chain(below).collect();
    Ok(Some(Around {
        rank: est.before + 1,
        total: est.total,
        first_rank,
        entries,
        rank_approximate: est.rank_approximate,
        total_approximate: est.total_approximate,
    }))
}

/// The best `n` players.
#[instrument(skip(ctx))]
pub async fn top<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
) -> Result<TopReply, ServiceError> {
    let key = format!("top|{lb}|{n}");
    cached(&ctx.hot.top, &ctx.last_known, key, false, || {
        top_fresh(ctx, lb, n)
    })
    .await
}

async fn top_fresh<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
) -> Result<TopReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let dir = board.policy.direction();
    let from_store = async |degraded| {
        let (keys, est) = futures::try_join!(
            async { Ok::<_, ServiceError>(ctx.store.ranked_after(lb, dir, None, n).await?) },
            estimate(&ctx.store, lb, dir, None),
        )?;
        let meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
        Ok::<_, ServiceError>((keys, est.total, meta))
    };
    let read = match n <= TOP_WINDOW {
        true => match ctx.hot.windows.read(&ctx.index, lb, dir).await {
            Ok(Some(w)) => Ok((
                w.entries.iter().take(n as usize).cloned().collect(),
                w.total,
            )),
            Ok(None) => ctx.index.top(lb, dir, n).await,
            Err(e) => Err(e),
        },
        false => ctx.index.top(lb, dir, n).await,
    };
    let (keys, total, meta) = match read {
        Ok((_, 0)) if history(&board) => from_store(false).await?,
        Ok((keys, total)) => (keys, total, Provenance::now(Source::Redis, false)),
        Err(e) => from_store(degraded_by(ctx, &board, &e).await).await?,
    };
    Ok(TopReply {
        leaderboard_id: lb.clone(),
        total,
        entries: entries(1, keys, None),
        meta,
    })
}

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

/// The player's place among themself and their friends who have a score.
/// The player's own read skips the reply cache.
#[instrument(skip(ctx, friends))]
pub async fn friends_rank<S: ScoreStore, I: RankIndex, F: FriendsSource>(
    ctx: &Context<S, I>,
    friends: &F,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<FriendsReply, ServiceError> {
    let key = format!("friends|{lb}|{player}|{k}");
    cached(
        &ctx.hot.friends,
        &ctx.last_known,
        key,
        caller.is(player),
        || friends_fresh(ctx, friends, lb, player, k),
    )
    .await
}

async fn friends_fresh<S: ScoreStore, I: RankIndex, F: FriendsSource>(
    ctx: &Context<S, I>,
    friends: &F,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<FriendsReply, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let dir = board.policy.direction();
    let mut group = friends.friends_of(player).await?;
    group.push(player.clone());
    let (keys, meta) = match ctx.index.keys_of(lb, dir, &group).await {
        Ok(keys) if keys.iter().all(Option::is_none) && history(&board) => (
            ctx.store.keys_of(lb, &group).await?,
            Provenance::now(Source::Dynamodb, false),
        ),
        Ok(keys) => (keys, Provenance::now(Source::Redis, false)),
        Err(e) => (
            ctx.store.keys_of(lb, &group).await?,
            Provenance::now(Source::Dynamodb, degraded_by(ctx, &board, &e).await),
        ),
    };
    let (friends_rank, window) =
        place_in_group(dir, player, keys.into_iter().flatten().collect(), k);
    Ok(FriendsReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        friends_rank,
        friends_total: window.total,
        entries: entries(window.first_rank, window.keys, Some(player)),
        meta,
    })
}

/// A slice of a sorted group.
struct GroupWindow {
    total: u64,
    first_rank: u64,
    keys: Vec<RankKey>,
}

/// Orders the group and picks k rows around `player` (or the top 2k+1 if absent).
fn place_in_group(
    dir: Direction,
    player: &PlayerId,
    mut keys: Vec<RankKey>,
    k: u64,
) -> (Option<u64>, GroupWindow) {
    keys.sort_by(|a, b| a.cmp_in(b, dir));
    let total = keys.len() as u64;
    let me = keys.iter().position(|key| key.player == player.as_str());
    let k = k as usize;
    let (lo, hi) = match me {
        Some(i) => (i.saturating_sub(k), (i + k + 1).min(keys.len())),
        None => (0, (2 * k + 1).min(keys.len())),
    };
    let window = GroupWindow {
        total,
        first_rank: lo as u64 + 1,
        keys: keys.drain(lo..hi).collect(),
    };
    (me.map(|i| i as u64 + 1), window)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::order::test_key as key;

    #[test]
    fn k_and_n_bounds() {
        assert_eq!(parse_k(None).unwrap(), DEFAULT_K);
        assert_eq!(parse_k(Some("50")).unwrap(), 50);
        assert!(parse_k(Some("51")).is_err());
        assert!(parse_k(Some("-1")).is_err());
        assert_eq!(parse_n(Some("5000")).unwrap(), MAX_N);
        assert_eq!(parse_n(Some("99999999999999999999999")).unwrap(), MAX_N);
        assert!(parse_n(Some("0")).is_err());
        assert!(parse_n(Some("x")).is_err());
    }

    #[test]
    fn group_window_centres_on_the_player() {
        let me = PlayerId::parse("me").unwrap();
        let keys = (0..10)
            .map(|i| key(&format!("f{i}"), i))
            .chain([key("me", 4)])
            .collect();
        let (rank, w) = place_in_group(Direction::Desc, &me, keys, 1);
        // Scores 9..0 with "me" tied at 4 after "f4" (same reached-at, "f4" < "me").
        assert_eq!(rank, Some(7));
        assert_eq!(w.total, 11);
        assert_eq!(w.first_rank, 6);
        let players: Vec<_> = w.keys.iter().map(|k| k.player.as_str()).collect();
        assert_eq!(players, ["f4", "me", "f3"]);
    }

    #[test]
    fn group_without_the_player_shows_its_top() {
        let me = PlayerId::parse("me").unwrap();
        let keys = (0..10).map(|i| key(&format!("f{i}"), i)).collect();
        let (rank, w) = place_in_group(Direction::Desc, &me, keys, 2);
        assert_eq!(rank, None);
        assert_eq!(w.first_rank, 1);
        assert_eq!(w.keys.len(), 5);
        assert_eq!(w.keys[0].player, "f9");
    }
}
