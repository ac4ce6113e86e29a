//! Score submission: exactly-once per `(board, player, match_id)`, then write-through.
//!
//! 1. Read the standing (strongly consistent) and fold the submission with the board's
//!    policy.
//! 2. Commit in one DynamoDB transaction: no receipt for this key yet, standing still at
//!    the version read. The receipt is written whether or not the standing changes, so a
//!    retry returns the same outcome. The board must be ACTIVE in this container's view
//!    of it, which is at most `BOARD_CACHE_TTL_MS` old (a manual freeze takes effect
//!    within that time; see `ScoreStore::commit` for why it is not in the transaction).
//! 3. A lost race on the version retries from 1 with jittered backoff; an existing
//!    receipt means this request is a retry, answered from the receipt (`replayed`).
//! 4. After the commit, apply the new standing to Redis (version-checked) and answer
//!    with the player's rank. If Redis fails the write still stands (`rank: null`); the
//!    stream projector applies it later.

use serde::{Deserialize, Serialize};
use tracing::{instrument, warn};

use super::Context;
use crate::board::{Board, BoardStatus, Fold, Standing};
use crate::error::{DomainError, IndexError, ServiceError};
use crate::ids::{LeaderboardId, MatchId, PlayerId};
use crate::order::{Direction, RankKey, RankMode};
use crate::score::Score;
use crate::store::{Commit, CommitOutcome, Health, IndexEntry, RankIndex, Receipt, ScoreStore};
use crate::time::{now_ms, rfc3339_ms};

/// Optimistic attempts before giving up with [`ServiceError::Contention`].
const MAX_ATTEMPTS: u32 = 64;

/// Body of `POST /leaderboards/{lb}/players/{p}/score`. Fields are checked one by one in
/// [`SubmitScore::new`] so each error names its field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScoreBody {
    pub new_score: Option<serde_json::Value>,
    pub match_id: Option<serde_json::Value>,
    /// When the match ended (RFC 3339 or ms); defaults to now. On a time-window board it
    /// must fall inside the window.
    pub event_ts: Option<serde_json::Value>,
}

/// A validated submission.
#[derive(Debug, Clone)]
pub struct SubmitScore {
    pub board: LeaderboardId,
    pub player: PlayerId,
    pub match_id: MatchId,
    pub score: Score,
    /// When the match ended, ms; `None` means now.
    pub event_ts: Option<i64>,
    /// Read the player's rank before the write and keep it in the receipt.
    pub want_previous_rank: bool,
    /// The reached-at to record if the score changes; `None` means the commit time.
    /// A fan-out gives all its boards the request's time, so ties break alike on each.
    pub reached_at: Option<i64>,
}

impl SubmitScore {
    pub fn new(
        board: LeaderboardId,
        player: PlayerId,
        body: ScoreBody,
    ) -> Result<Self, DomainError> {
        let score = match body.new_score {
            Some(serde_json::Value::Number(n)) => Score::from_json("new_score", &n)?,
            Some(_) => return Err(DomainError::invalid("new_score", "must be an integer")),
            None => return Err(DomainError::invalid("new_score", "is required")),
        };
        let match_id = match body.match_id {
            Some(serde_json::Value::String(s)) => MatchId::parse(&s)?,
            Some(_) => return Err(DomainError::invalid("match_id", "must be a string")),
            None => return Err(DomainError::invalid("match_id", "is required")),
        };
        let event_ts = body
            .event_ts
            .as_ref()
            .map(|v| crate::time::parse_ts("event_ts", v))
            .transpose()?;
        Ok(Self {
            board,
            player,
            match_id,
            score,
            event_ts,
            want_previous_rank: true,
            reached_at: None,
        })
    }
}

/// The ingest reply (docs/api.md).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct IngestReply {
    pub player_id: PlayerId,
    pub leaderboard_id: LeaderboardId,
    pub score: i64,
    pub previous_score: Option<i64>,
    pub last_match_id: MatchId,
    /// Reached-at of `score`, RFC 3339 with ms: what the board orders ties by.
    pub updated_at: String,
    pub update_applied: bool,
    /// The player's rank now; `null` when the rank index could not be reached.
    pub rank: Option<u64>,
    pub total: Option<u64>,
    /// The rank before this submission (`null` for a player new to the board, or when
    /// the index could not say); kept in the receipt, so a retry answers the same.
    pub previous_rank: Option<u64>,
    pub replayed: bool,
}

impl IngestReply {
    fn new(req: &SubmitScore, r: &Receipt, replayed: bool) -> Self {
        Self {
            player_id: req.player.clone(),
            leaderboard_id: req.board.clone(),
            score: r.score.get(),
            previous_score: r.previous_score.map(Score::get),
            last_match_id: r.last_match_id.clone(),
            updated_at: rfc3339_ms(r.updated_at),
            update_applied: r.update_applied,
            rank: None,
            total: None,
            previous_rank: r.previous_rank,
            replayed,
        }
    }
}

/// Records one submission; see the module docs for the protocol.
#[instrument(skip(ctx), fields(board = %req.board, player = %req.player, match_id = %req.match_id))]
pub async fn submit_score<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    let now = now_ms();
    check_event_ts(ctx, req.event_ts, now)?;
    let board = ctx.boards.current(&ctx.store, &req.board).await?;
    submit_to(ctx, &board, req).await
}

/// Refuses an `event_ts` further in the future than the allowed skew.
pub(crate) fn check_event_ts<S, I>(
    ctx: &Context<S, I>,
    event_ts: Option<i64>,
    now: i64,
) -> Result<(), DomainError> {
    let skew_ms = ctx.settings.max_future_skew.as_millis() as i64;
    match event_ts {
        Some(ts) if ts > now + skew_ms => Err(DomainError::EventInFuture { skew_ms }),
        _ => Ok(()),
    }
}

/// Records one submission on an already loaded board.
pub async fn submit_to<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    board: &Board,
    req: SubmitScore,
) -> Result<IngestReply, ServiceError> {
    let dir = board.policy.direction();
    if let Some(refusal) = refusal(board, &req, now_ms()) {
        // A retry of a match accepted before the board closed still gets its receipt.
        if let Some(reply) = replay(ctx, &req, dir).await? {
            return Ok(reply);
        }
        return Err(refusal);
    }
    let previous_rank = previous_rank(ctx, &req, dir).await;
    let index_expire_at = ctx.settings.index_expire_at(board);
    for attempt in 0..MAX_ATTEMPTS {
        let row = ctx.store.get_row(&req.board, &req.player).await?;
        let current = row.standing;
        let now = now_ms();
        let fold = match board.policy.fold(
            current.as_ref(),
            req.score,
            &req.match_id,
            req.reached_at.unwrap_or(now),
        ) {
            // A player whose standing was removed starts over after the removal.
            Ok(fold) if current.is_none() => fold.after_removal(row.version),
            Ok(fold) => fold,
            // A retry of an accepted match must replay, even if folding it again would
            // now be refused (a SUM total near the limit).
            Err(e) => return replay(ctx, &req, dir).await?.ok_or_else(|| e.into()),
        };
        let (standing, mut receipt) = outcome(&req, current.as_ref(), &fold);
        receipt.previous_rank = previous_rank;
        let commit = Commit {
            board: &req.board,
            player: &req.player,
            match_id: &req.match_id,
            direction: dir,
            expected_version: row.version,
            standing,
            receipt: &receipt,
            receipt_expires_at: now / 1000 + ctx.settings.receipt_ttl.as_secs() as i64,
            index_expire_at,
            game: board.window.as_ref().map(|w| w.game.as_str()),
        };
        match ctx.store.commit(&commit).await? {
            CommitOutcome::Committed => {
                let mut reply = IngestReply::new(&req, &receipt, false);
                place(ctx, &req, dir, standing, index_expire_at, &mut reply).await;
                return Ok(reply);
            }
            CommitOutcome::ReceiptExists => {
                if let Some(reply) = replay(ctx, &req, dir).await? {
                    return Ok(reply);
                }
                // The receipt expired between the two reads; start over.
            }
            CommitOutcome::StandingChanged => tokio::time::sleep(super::backoff(attempt)).await,
            CommitOutcome::Banned => {
                return Err(ServiceError::PlayerBanned {
                    game: commit.game.unwrap_or_default().to_owned(),
                    player: req.player.clone(),
                });
            }
        }
    }
    warn!(attempts = MAX_ATTEMPTS, "gave up under write contention");
    Err(ServiceError::Contention)
}

/// Why `board` takes no new result now, if it does not: the event is outside its
/// window, the window has closed, or the board is not ACTIVE.
fn refusal(board: &Board, req: &SubmitScore, now: i64) -> Option<ServiceError> {
    let outside = board
        .window
        .as_ref()
        .zip(req.event_ts)
        .is_some_and(|(w, ts)| !w.window.contains(ts));
    if outside {
        Some(ServiceError::EventOutsideWindow(req.board.clone()))
    } else if let Some(at) = board.closes_at().filter(|at| now >= *at) {
        Some(ServiceError::WindowClosed {
            lb: req.board.clone(),
            closed_at: rfc3339_ms(at),
        })
    } else if board.status != BoardStatus::Active {
        Some(ServiceError::BoardNotActive {
            lb: req.board.clone(),
            status: board.status,
        })
    } else {
        None
    }
}

/// The player's rank before this submission, when asked for and the index can say.
async fn previous_rank<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Option<u64> {
    if !req.want_previous_rank {
        return None;
    }
    match ctx
        .index
        .around(&req.board, dir, &req.player, 0, RankMode::Unique)
        .await
    {
        Ok(a) => a.map(|a| a.rank),
        Err(error) => {
            warn!(%error, "previous rank unavailable");
            None
        }
    }
}

/// The standing to write (if any) and the receipt to keep for this submission.
fn outcome<'a>(
    req: &SubmitScore,
    current: Option<&Standing>,
    fold: &'a Fold,
) -> (Option<&'a Standing>, Receipt) {
    let previous_score = current.map(|c| c.score);
    match (fold, current) {
        (Fold::Applied(next), _) => (
            Some(next),
            Receipt {
                submitted: req.score,
                score: next.score,
                previous_score,
                update_applied: true,
                updated_at: next.reached_at,
                last_match_id: next.last_match_id.clone(),
                previous_rank: None,
            },
        ),
        (Fold::Unchanged, Some(cur)) => (
            None,
            Receipt {
                submitted: req.score,
                score: cur.score,
                previous_score,
                update_applied: false,
                updated_at: cur.reached_at,
                last_match_id: cur.last_match_id.clone(),
                previous_rank: None,
            },
        ),
        // A first submission always applies; kept total for the type checker.
        (Fold::Unchanged, None) => unreachable!("a fold without a standing always applies"),
    }
}

/// Answers a retry from its receipt; `None` if there is no receipt.
async fn replay<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
) -> Result<Option<IngestReply>, ServiceError> {
    let Some(receipt) = ctx
        .store
        .get_receipt(&req.board, &req.player, &req.match_id)
        .await?
    else {
        return Ok(None);
    };
    if receipt.submitted != req.score {
        return Err(ServiceError::IdempotencyConflict(req.match_id.clone()));
    }
    let mut reply = IngestReply::new(req, &receipt, true);
    place(ctx, req, dir, None, None, &mut reply).await;
    Ok(Some(reply))
}

/// Fills in the rank: applies `standing` to the index (write-through) or, when nothing
/// changed, reads the player's current rank. Index failures leave `rank` null.
async fn place<S, I: RankIndex>(
    ctx: &Context<S, I>,
    req: &SubmitScore,
    dir: Direction,
    standing: Option<&Standing>,
    expire_at: Option<i64>,
    reply: &mut IngestReply,
) {
    if !ctx.settings.write_through {
        return;
    }
    let placed = match standing {
        Some(s) => {
            let entry = IndexEntry {
                board: req.board.clone(),
                direction: dir,
                key: RankKey {
                    score: s.score,
                    reached_at: s.reached_at,
                    player: req.player.to_string(),
                },
                version: s.version,
                expire_at,
                kind: crate::store::EntryKind::Standing,
            };
            ctx.index.apply(&entry).await.map(|p| match p.health {
                Health::Ready => Placed::At(p.rank, p.total),
                // A rank from an incomplete index (wiped, stale, rebuilding) would be wrong.
                other => Placed::NotReady(other),
            })
        }
        None => ctx
            .index
            .around(&req.board, dir, &req.player, 0, RankMode::Unique)
            .await
            .map(|a| a.map_or(Placed::Unranked, |a| Placed::At(a.rank, a.total))),
    };
    match placed {
        Ok(Placed::At(rank, total)) => {
            reply.rank = Some(rank);
            reply.total = Some(total);
        }
        Ok(Placed::Unranked) => {}
        Ok(Placed::NotReady(health)) | Err(IndexError::NotReady(health)) => {
            ctx.repairs.report(&ctx.index, &req.board, health).await;
        }
        Err(error) => warn!(%error, "rank index unavailable; the stream will catch it up"),
    }
}

/// Where the write-through found the player.
enum Placed {
    At(u64, u64),
    /// Not on the board (a replayed receipt whose standing is gone from the index).
    Unranked,
    /// The board's index is not complete: no rank to give.
    NotReady(Health),
}
