//! A context over the in-memory twins, ids, and a repair queue that keeps what it gets.

use futures::future::BoxFuture;
use leaderboard_core::memory::{MemoryIndex, MemoryStore};
use leaderboard_core::service::Context;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::ingest;
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::service::write::reply::IngestReply;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::store::IndexReads;
use leaderboard_core::store::QueueError;
use leaderboard_core::store::{RankedReads, RebuildNeeded, RepairQueue, StandingStore};
use leaderboard_rules::board::{Board, BoardStatus, BoardWindow, Policy, Standing};
use leaderboard_rules::decimal::Amount;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction};
use leaderboard_rules::score::Score;
use leaderboard_rules::window::{Period, TimeWindow};
use std::sync::{Arc, Mutex};

pub type Ctx = Context<MemoryStore, MemoryIndex>;

pub fn ctx() -> Ctx {
    leaderboard_core::memory::context()
}

/// A context whose repair reports land in the returned list.
pub fn ctx_reporting() -> (Ctx, Reports) {
    let reports = Reports::default();
    let ctx = ctx().with_repairs(Reporter::new(reports.clone()));
    (ctx, reports)
}

pub fn player(raw: &str) -> PlayerId {
    PlayerId::parse(raw).expect("player id")
}

pub fn match_id(raw: &str) -> MatchId {
    MatchId::parse(raw).expect("match id")
}

/// A new ACTIVE board (its index marked complete).
pub async fn board(ctx: &Ctx, raw: &str, policy: Policy) -> LeaderboardId {
    leaderboard_core::memory::seed(ctx, raw, policy, &[]).await
}

/// A window board of game `game`, mode `m`, scope GLOBAL, of `period` and key `key`,
/// open for an hour more (a test closes it once its writes are in, however slow the
/// machine: `MemoryStore::set_window_end`).
pub async fn window_board(
    ctx: &Ctx,
    game: &str,
    period: Period,
    key: &str,
    policy: Policy,
) -> Board {
    use leaderboard_core::store::BoardStore;
    let now = leaderboard_rules::time::now_ms();
    let board = Board {
        tournament: None,
        leaderboard_id: LeaderboardId::parse(&format!("{game}:m:GLOBAL:{}:{key}", period.as_str()))
            .unwrap(),
        policy,
        status: BoardStatus::Active,
        created_at: now,
        window: Some(BoardWindow {
            rolling_ms: None,
            game: game.into(),
            mode: "m".into(),
            scope: "GLOBAL".into(),
            window: TimeWindow {
                period,
                key: Some(key.into()),
                start: Some(now - 3_600_000),
                end: Some(now + 3_600_000),
            },
            grace_ms: 0,
        }),
        sealed_at: None,
        dense_ranks: true,
        rank_index: true,
        scores: Default::default(),
        integrity: None,
        reset: None,
        rewards: None,
    };
    ctx.store.create_board(&board).await.unwrap();
    board
}

/// The player's standing as the store holds it.
pub async fn standing(ctx: &Ctx, board: &LeaderboardId, p: &str) -> Option<Standing> {
    ctx.store.get_standing(board, &player(p)).await.unwrap()
}

pub async fn submit(
    ctx: &Ctx,
    board: &LeaderboardId,
    p: &str,
    m: &str,
    score: i64,
) -> Result<IngestReply, ServiceError> {
    let score = Amount::whole("score", Score::new("score", score).expect("score"));
    let req = SubmitScore::plain(board.clone(), player(p), match_id(m), score);
    ingest::submit_score(ctx, req).await
}

/// `n` players `p00`.. with scores 10, 20, ...
pub async fn populate(ctx: &Ctx, board: &LeaderboardId, n: u64) {
    for i in 0..n {
        let p = format!("p{i:02}");
        submit(ctx, board, &p, &format!("m-{p}"), 10 * (i as i64 + 1))
            .await
            .expect("write");
    }
}

/// Asserts that the index holds exactly the store's standings of `board`, in order.
pub async fn assert_index_matches_store(ctx: &Ctx, board: &LeaderboardId) {
    let dir = Direction::Desc;
    let truth = ctx
        .store
        .ranked_after(BoardOrder::new(board, dir), None, 1_000_000)
        .await
        .unwrap();
    let index: Vec<_> = ctx
        .index
        .snapshot(board, dir)
        .into_iter()
        .map(|(_, k)| k)
        .collect();
    assert_eq!(index, truth);
    let (top, total) = ctx
        .index
        .top(BoardOrder::new(board, dir), 1_000_000)
        .await
        .unwrap();
    assert_eq!((top, total), (truth.clone(), truth.len() as u64));
}

/// A repair queue that keeps every report.
#[derive(Clone, Default)]
pub struct Reports(Arc<Mutex<Vec<RebuildNeeded>>>);

impl Reports {
    pub fn taken(&self) -> Vec<RebuildNeeded> {
        self.0.lock().unwrap().clone()
    }
}

impl RepairQueue for Reports {
    fn report<'a>(&'a self, need: &'a RebuildNeeded) -> BoxFuture<'a, Result<(), QueueError>> {
        self.0.lock().unwrap().push(need.clone());
        Box::pin(async { Ok(()) })
    }
}
