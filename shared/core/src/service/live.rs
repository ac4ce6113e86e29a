//! Live views (see [`leaderboard_rules::live`]): a client's snapshot, which also marks its view
//! watched, and the publisher, which takes a batch of the table's stream and pushes every
//! watched view the batch changed.
//!
//! The publisher applies the batch to the index first (version-checked, so it may race
//! the projector freely), so the views it reads hold the batch whatever the projector's
//! lag. Per view it takes the view's push gate for [`PUSH_GAP_MS`] and reads the view;
//! it publishes only if the rows differ from the last push, else it frees the gate. A
//! view whose gate is held is read again once the gate is free: changes that arrive
//! while a view waits are coalesced into the one push, and a view is pushed at most
//! once per gap however many writes, invocations or shards change it.
//!
//! Rows carry their players' current cards, read as the reads read them
//! (`reads::names`), so a rename changes a view: a batch with profile changes copies
//! the cards into the index and looks through every watched view of the boards watched
//! now (the registry [`LiveViews::watched_boards`]); the views that show a renamed
//! player differ from their last push and are pushed, the rest are left as they are.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Serialize;
use tracing::{info, instrument, warn};

use crate::service::Context;
use crate::service::ServiceError;
use crate::service::reads::names;
use crate::store::{
    BoardStore, BroadcastError, Broadcaster, Claim, IndexError, LiveViews, ProfileStore, RankIndex,
    StandingStore, StreamBatch,
};
use leaderboard_rules::caller::Caller;
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::live::{
    PUSH_GAP_MS, Published, Push, Row, Rows, View, WATCH_TTL_MS, next_version, notices,
};
use leaderboard_rules::order::{BoardOrder, Direction, RankMode};
use leaderboard_rules::profile::Card;

/// Claims of a view's gate one batch makes before leaving it to the holder (whose push,
/// read after the batch was applied, carries it).
const MAX_CLAIMS: u32 = 8;

/// Reply of the snapshot routes: the view now, the channel its pushes come on, and the
/// version of the last push (0 if none yet). Pushes whose `previous` is this version
/// follow on from this snapshot.
#[derive(Debug, Clone, Serialize)]
pub struct LiveReply {
    pub channel: String,
    #[serde(flatten)]
    pub push: Push,
}

/// The top `n` of `lb` now, and the view marked watched.
#[instrument(skip(ctx))]
pub async fn watch_top<S: BoardStore + StandingStore + ProfileStore, I: RankIndex + LiveViews>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    n: u64,
) -> Result<LiveReply, ServiceError> {
    snapshot(ctx, lb, View::top(n)?).await
}

/// `player`'s neighbourhood (rank +- `k`) on `lb` now, for `player` only, and the view
/// marked watched.
#[instrument(skip(ctx))]
pub async fn watch_near<S: BoardStore + StandingStore + ProfileStore, I: RankIndex + LiveViews>(
    ctx: &Context<S, I>,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
) -> Result<LiveReply, ServiceError> {
    if !caller.is(player) {
        return Err(ServiceError::NotYourView {
            player: player.clone(),
        });
    }
    snapshot(ctx, lb, View::near(player.clone(), k)?).await
}

async fn snapshot<S: BoardStore + StandingStore + ProfileStore, I: RankIndex + LiveViews>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    view: View,
) -> Result<LiveReply, ServiceError> {
    let channel = view.channel(lb)?;
    let board = ctx.boards.get(&ctx.store, lb).await?;
    let id = view.id();
    let now = leaderboard_rules::time::now_ms();
    let dir = board.policy.direction();
    ctx.index
        .watch(BoardOrder::new(lb, dir), &id, now + WATCH_TTL_MS)
        .await?;
    // Names that could not be read go out null here; the next push brings them.
    let ((rows, _), last) = futures::try_join!(
        rows_of(ctx, lb, dir, board.scores, &view),
        ctx.index.last_push(lb, &id),
    )?;
    let version = match last {
        Some(l) => l.version,
        None => seed(&ctx.index, lb, &id, &rows).await?,
    };
    Ok(LiveReply {
        channel,
        push: Push::new(lb, &view, version, 0, rows),
    })
}

/// A view read for the first time becomes its own first version, under the push gate
/// as every version is, so the first change after it is told against it (what the
/// player saw, who overtook them) and nothing is pushed for what did not change.
/// Returns the version the reader holds: the seed's, the one a push made meanwhile, or
/// 0 while a push is under way (which the reader then takes, as its `previous` is 0).
async fn seed<I: LiveViews>(
    index: &I,
    lb: &LeaderboardId,
    id: &str,
    rows: &Rows,
) -> Result<u64, IndexError> {
    let gap = Duration::from_millis(SEED_GATE_MS);
    match index.claim(lb, id, gap).await? {
        Claim::Granted(Some(last)) => {
            index.release(lb, id).await?;
            Ok(last.version)
        }
        Claim::Granted(None) => {
            let first = Published {
                version: next_version(None, leaderboard_rules::time::now_ms() as u64),
                digest: rows.digest(),
                rows: rows.clone(),
            };
            index.record(lb, id, &first).await?;
            index.release(lb, id).await?;
            Ok(first.version)
        }
        Claim::Wait(_) => Ok(0),
    }
}

/// How long a snapshot's seed may hold a view's gate (it frees it at once when done).
const SEED_GATE_MS: u64 = 1_000;

/// The rows of `view` in the index now, each with its player's current card and its
/// metadata; false when some could not be read (those rows show nulls).
async fn rows_of<S: StandingStore + ProfileStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    scores: ScoreFormat,
    view: &View,
) -> Result<(Rows, bool), IndexError> {
    let row = |rank, key: leaderboard_rules::order::RankKey| Row {
        rank,
        player_id: key.player,
        score: scores.show(key.score),
        subscores: scores.tiebreaks.shown(&key.ties),
        card: Card::default(),
        metadata: None,
    };
    let (mut rows, known) = match view {
        View::Top { n } => {
            let (keys, _, cards, metadata) =
                ctx.index.top_named(BoardOrder::new(lb, dir), *n).await?;
            let known = names::known(&keys, cards, metadata);
            let rows = Rows {
                rank: None,
                score: None,
                entries: (1..).zip(keys).map(|(rank, key)| row(rank, key)).collect(),
            };
            (rows, known)
        }
        View::Near { player, k } => {
            match ctx
                .index
                .around(BoardOrder::new(lb, dir), player, *k, RankMode::Unique)
                .await?
            {
                Some(a) => {
                    let known = names::known(&a.entries, a.cards, a.metadata);
                    let score = a
                        .entries
                        .iter()
                        .find(|e| e.player == player.as_str())
                        .map(|e| scores.show(e.score));
                    let rows = Rows {
                        rank: Some(a.rank),
                        score,
                        entries: (a.first_rank..)
                            .zip(a.entries)
                            .map(|(rank, key)| row(rank, key))
                            .collect(),
                    };
                    (rows, known)
                }
                None => (Rows::default(), names::Known::default()),
            }
        }
    };
    let players: Vec<&str> = rows.entries.iter().map(|r| r.player_id.as_str()).collect();
    let (found, complete) = names::details_of(ctx, lb, &players, known, true).await;
    for (row, (card, md)) in rows.entries.iter_mut().zip(found) {
        row.card = card;
        row.metadata = md.map(|m| m.to_object());
    }
    Ok((rows, complete))
}

/// What one batch did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PublishStats {
    /// Views pushed.
    pub pushed: usize,
    /// Watched views of changed boards whose rows had not changed.
    pub unchanged: usize,
    /// Views left to another push holding their gate.
    pub left: usize,
    /// Views that failed (the batch is retried).
    pub failed: usize,
}

impl PublishStats {
    /// The batch's metrics: every batch counts, the one whose index apply failed too
    /// (`LivePushFailures` is what the alarm on live push watches).
    fn record(&self) {
        crate::service::metrics::count(&[
            ("LivePushes", self.pushed as u64),
            ("LiveViewsUnchanged", self.unchanged as u64),
            ("LivePushFailures", self.failed as u64),
        ]);
    }
}

/// Why a view could not be pushed.
#[derive(Debug, thiserror::Error)]
enum PushError {
    #[error(transparent)]
    Index(#[from] IndexError),
    #[error(transparent)]
    Broadcast(#[from] BroadcastError),
    /// The rows' cards could not be read (neither from Redis nor from DynamoDB).
    #[error("the rows' cards could not be read")]
    Names,
    /// Not reached: a view is watched only after its channel was spelled.
    #[error(transparent)]
    Channel(#[from] leaderboard_rules::error::DomainError),
}

enum Outcome {
    Pushed,
    Unchanged,
    Left,
}

/// Pushes the watched views `batch` changed (its standings' boards, and for a profile
/// change every watched board); returns the sequence numbers to retry (the whole
/// batch's, standings and profiles, if the index, a card read or the events API
/// failed, else none).
#[instrument(skip_all, fields(records = batch.entries.len(), cards = batch.cards.len()))]
pub async fn publish<
    S: BoardStore + StandingStore + ProfileStore,
    I: RankIndex + LiveViews,
    B: Broadcaster,
>(
    ctx: &Context<S, I>,
    out: &B,
    batch: StreamBatch,
) -> (Vec<Option<String>>, PublishStats) {
    let mut stats = PublishStats::default();
    if batch.entries.is_empty() && batch.cards.is_empty() {
        return (Vec::new(), stats);
    }
    let retry = || {
        let all = batch
            .sequence_numbers
            .iter()
            .chain(&batch.card_sequence_numbers);
        all.cloned().collect()
    };
    let index = &ctx.index;
    let now = leaderboard_rules::time::now_ms();
    let applied = async {
        if !batch.entries.is_empty() {
            index.apply_many(&batch.entries).await?;
        }
        if batch.cards.is_empty() {
            return Ok(Vec::new());
        }
        // A rename may show in any watched view: look through all of them.
        index.put_cards(&batch.cards).await?;
        index.watched_boards(now).await
    };
    let renamed_on = match applied.await {
        Ok(boards) => boards,
        Err(e) => {
            warn!(error = %e, "index apply failed; the batch is retried");
            stats.failed = 1;
            stats.record();
            return (retry(), stats);
        }
    };
    let boards: BTreeMap<LeaderboardId, Direction> = batch
        .entries
        .iter()
        .map(|e| (e.board.clone(), e.direction))
        .chain(renamed_on)
        .collect();
    let per_board = boards.iter().map(|(lb, &dir)| async move {
        let watched = index.watched(lb, now).await?;
        if watched.is_empty() {
            return Ok(Vec::new());
        }
        // How the board writes its scores (a cached read of its definition).
        let scores = match ctx.boards.get(&ctx.store, lb).await {
            Ok(board) => board.scores,
            Err(ServiceError::BoardNotFound(_)) => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let views = watched.iter().filter_map(|id| View::from_id(id));
        let pushes = views.map(|view| push_view(ctx, out, lb, dir, scores, view));
        Ok::<_, ServiceError>(futures::future::join_all(pushes).await)
    });
    for outcomes in futures::future::join_all(per_board).await {
        let outcomes = match outcomes {
            Ok(o) => o,
            Err(e) => {
                warn!(error = %e, "watched views unreadable");
                stats.failed += 1;
                continue;
            }
        };
        for outcome in outcomes {
            match outcome {
                Ok(Outcome::Pushed) => stats.pushed += 1,
                Ok(Outcome::Unchanged) => stats.unchanged += 1,
                Ok(Outcome::Left) => stats.left += 1,
                Err(e) => {
                    warn!(error = %e, "view not pushed");
                    stats.failed += 1;
                }
            }
        }
    }
    stats.record();
    info!(
        pushed = stats.pushed,
        unchanged = stats.unchanged,
        left = stats.left,
        failed = stats.failed,
        "batch published"
    );
    match stats.failed {
        0 => (Vec::new(), stats),
        _ => (retry(), stats),
    }
}

/// One view: claim its gate (waiting out another push's), read it, push it if changed.
async fn push_view<S: StandingStore + ProfileStore, I: RankIndex + LiveViews, B: Broadcaster>(
    ctx: &Context<S, I>,
    out: &B,
    lb: &LeaderboardId,
    dir: Direction,
    scores: ScoreFormat,
    view: View,
) -> Result<Outcome, PushError> {
    let index = &ctx.index;
    let id = view.id();
    let channel = view.channel(lb)?;
    let gap = Duration::from_millis(PUSH_GAP_MS);
    for _ in 0..MAX_CLAIMS {
        let last = match index.claim(lb, &id, gap).await? {
            Claim::Granted(last) => last,
            Claim::Wait(wait) => {
                tokio::time::sleep(wait).await;
                continue;
            }
        };
        // Holding the gate: a push keeps it for its gap; anything else frees it.
        let pushed = async {
            let (rows, named) = rows_of(ctx, lb, dir, scores, &view).await?;
            if !named {
                // Not pushed without its names (which would take them away until the
                // next change): the batch is retried.
                return Err(PushError::Names);
            }
            let digest = rows.digest();
            if last.as_ref().is_some_and(|l| l.digest == digest) {
                return Ok(None);
            }
            let before = last.as_ref().map(|l| l.version);
            let published = Published {
                version: next_version(before, leaderboard_rules::time::now_ms() as u64),
                digest,
                rows,
            };
            let rows = published.rows.clone();
            let mut push = Push::new(lb, &view, published.version, before.unwrap_or(0), rows);
            if let View::Near { player, .. } = &view {
                push.notices = notices(player, last.as_ref().map(|l| &l.rows), &push.rows);
            }
            let event = serde_json::to_string(&push).unwrap_or_default();
            out.publish(&channel, event).await?;
            Ok::<_, PushError>(Some(published))
        }
        .await;
        return match pushed {
            Ok(Some(published)) => {
                index.record(lb, &id, &published).await?;
                Ok(Outcome::Pushed)
            }
            Ok(None) => {
                index.release(lb, &id).await?;
                Ok(Outcome::Unchanged)
            }
            Err(e) => {
                let _ = index.release(lb, &id).await;
                Err(e)
            }
        };
    }
    Ok(Outcome::Left)
}
