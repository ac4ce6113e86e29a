//! A board reset now: the standings of that moment sealed as an archive once (however
//! many ask and run), the board emptied, every result on exactly one side of it.

use std::time::{Duration, Instant};

use leaderboard_core::memory::{MemoryEvents, MemoryJobQueue};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::seal::reset::{self, ResetOutcome, ResetSettings};
use leaderboard_core::service::seal::results;
use leaderboard_core::store::{
    BoardStore, HistoryQuery, JobTurn, ModerationStore, RankedReads, ResetTurn, SealStore,
};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction};
use leaderboard_rules::window::Period;

use crate::fixtures::{Ctx, board, ctx, player, standing, submit};

const NOW: ResetSettings = ResetSettings {
    fence_delay: Duration::ZERO,
    settle: Duration::ZERO,
    redis_retention: Duration::from_secs(3600),
};

fn reason(text: &str) -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(text.into()),
    })
    .unwrap()
}

fn later() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

/// The reset turns handed on, in order.
fn turns(queue: &MemoryJobQueue) -> Vec<(ResetTurn, Duration)> {
    (queue.turns.lock().unwrap().iter())
        .filter_map(|(t, d)| match t {
            JobTurn::Reset(r) => Some((r.clone(), *d)),
            JobTurn::Export(_) => None,
        })
        .collect()
}

/// Each player's standing, best first, as the store ranks them.
async fn ranked(ctx: &Ctx, lb: &LeaderboardId) -> Vec<(String, i64)> {
    let keys = (ctx.store)
        .ranked_after(BoardOrder::new(lb, Direction::Desc), None, 1_000)
        .await
        .unwrap();
    keys.into_iter()
        .map(|k| (k.player, k.score.get()))
        .collect()
}

#[tokio::test]
async fn a_reset_archives_the_standings_once_empties_the_board_and_each_result_lands_once() {
    let ctx = ctx();
    let (events, queue) = (MemoryEvents::default(), MemoryJobQueue::default());
    let lb = board(&ctx, "rst:sum", Policy::Sum).await;
    // Player i's result k adds 2^k: a standing's bits name the results it holds.
    for i in 0..10_i64 {
        for k in 0..=i % 4 {
            let m = format!("m{i}-{k}");
            submit(&ctx, &lb, &format!("p{i}"), &m, 1 << k)
                .await
                .unwrap();
        }
    }
    let before = ranked(&ctx, &lb).await;
    assert_eq!(before.len(), 10);

    // Two asked at once make one reset.
    let op = Operator("ops@studio".into());
    let deps = (&ctx.store, &queue);
    let (a, b) = tokio::join!(
        reset::start(deps, NOW, &op, &lb, reason("exploit")),
        reset::start(deps, NOW, &op, &lb, reason("exploit, again")),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!((a.reset, a.status), (1, "RESETTING"));
    assert_eq!(a, b, "the second asker is answered the first");
    assert_eq!(a.archive_id.as_str(), "rst:sum.reset-1");
    let audit = (ctx.store)
        .audit_page(leaderboard_rules::page::Paging::new(None, 10))
        .await
        .unwrap();
    let resets: Vec<_> = (audit.records.iter())
        .filter(|r| r.action == leaderboard_core::store::AuditAction::Reset)
        .collect();
    assert_eq!(resets.len(), 1, "audited once");
    assert_eq!(turns(&queue).len(), 1, "one turn handed on");

    // From the fence a new result waits (a retryable 503); a retry of one the board
    // took before is answered from its receipt.
    let refused = submit(&ctx, &lb, "p1", "m-new", 64).await.unwrap_err();
    assert_eq!(refused.code(), "board_resetting");
    assert!(refused.is_transient());
    let retry = submit(&ctx, &lb, "p1", "m1-0", 1).await.unwrap();
    assert!(retry.replayed);

    let turn = turns(&queue)[0].0.clone();
    let run = reset::run((&ctx.store, &events, &queue), NOW, &turn, later());
    assert_eq!(run.await.unwrap(), ResetOutcome::Done);
    let again = reset::run((&ctx.store, &events, &queue), NOW, &turn, later());
    assert_eq!(again.await.unwrap(), ResetOutcome::Passed, "done once");
    let stored = ctx.store.get_board(&lb).await.unwrap().unwrap();
    assert!(stored.reset.as_ref().is_some_and(|r| r.done_at.is_some()));

    // The archive: its results are the standings of the moment, published once.
    assert!(ranked(&ctx, &lb).await.is_empty(), "the board is empty");
    let archive = results(&ctx.store, &a.archive_id).await.unwrap();
    assert_eq!(archive.total, 10);
    let archived: Vec<(String, i64)> = (archive.entries.iter())
        .map(|e| (e.player_id.as_ref().unwrap().to_string(), e.score.get()))
        .collect();
    assert_eq!(archived, before);
    let published = events.published();
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].seal_id, a.archive_id.as_str());
    assert_eq!(published[0].window.window, "reset-1");
    // And the reset itself, once done: its archive and how many it keeps.
    let resets = events.resets();
    assert_eq!(resets.len(), 1);
    assert_eq!(resets[0].reset_id, a.archive_id.as_str());
    assert_eq!((resets[0].reset, resets[0].archived), (1, 10));
    assert!(resets[0].detail.done_at.is_some());
    // A standalone board's history rows name it as their scope.
    let q = HistoryQuery {
        player: &player("p3"),
        game: "",
        mode: "",
        scope: lb.as_str(),
        period: Period::AllTime,
        end_at_most: None,
        limit: 10,
    };
    let history = ctx.store.history(&q).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        (history[0].score, history[0].window.leaderboard_id.clone()),
        (15, a.archive_id.clone())
    );

    // After: a new result starts its player over; a retry of one archived is answered
    // as it was and adds nothing.
    submit(&ctx, &lb, "p3", "m-after", 64).await.unwrap();
    let retry = submit(&ctx, &lb, "p3", "m3-2", 4).await.unwrap();
    assert!(retry.replayed);
    assert_eq!(standing(&ctx, &lb, "p3").await.unwrap().score.get(), 64);
    assert_eq!(ranked(&ctx, &lb).await, vec![("p3".to_owned(), 64)]);

    // A second reset archives only what came after the first.
    let second = reset::start(deps, NOW, &op, &lb, reason("new season"))
        .await
        .unwrap();
    assert_eq!(
        (second.reset, second.since.clone()),
        (2, a.fence_at.clone())
    );
    let turn = turns(&queue)[1].0.clone();
    let run = reset::run((&ctx.store, &events, &queue), NOW, &turn, later());
    assert_eq!(run.await.unwrap(), ResetOutcome::Done);
    let archive = results(&ctx.store, &second.archive_id).await.unwrap();
    assert_eq!(archive.total, 1);
    assert_eq!(events.published().len(), 2);
    assert_eq!(events.resets().len(), 2);
}

#[tokio::test]
async fn a_reset_waits_for_its_fence_to_settle_and_the_sweep_takes_up_a_lost_turn() {
    let ctx = ctx();
    let (events, queue) = (MemoryEvents::default(), MemoryJobQueue::default());
    let lb = board(&ctx, "rst:wait", Policy::Best).await;
    submit(&ctx, &lb, "a", "m1", 5).await.unwrap();
    let op = Operator("ops@studio".into());
    let slow = ResetSettings {
        fence_delay: Duration::from_secs(3600),
        ..NOW
    };
    let view = reset::start((&ctx.store, &queue), slow, &op, &lb, reason("r"))
        .await
        .unwrap();
    let (turn, delay) = turns(&queue)[0].clone();
    assert!(
        delay > Duration::from_secs(3500),
        "sent for its fence: {delay:?}"
    );
    // Before the fence the board takes results as before.
    submit(&ctx, &lb, "b", "m2", 7).await.unwrap();
    // A run that cannot wait for the fence hands the reset on.
    let soon = Instant::now() + Duration::from_secs(1);
    let run = reset::run((&ctx.store, &events, &queue), slow, &turn, soon);
    assert_eq!(run.await.unwrap(), ResetOutcome::HandedOn);
    assert_eq!(turns(&queue).len(), 2);
    let swept = reset::sweep((&ctx.store, &events, &queue), slow, later())
        .await
        .unwrap();
    assert!(swept.is_empty(), "not due before its fence settles");

    // Another board's reset whose turn the queue lost: the sweep runs it once it is
    // due, and passes the one still waiting for its fence by.
    let other = board(&ctx, "rst:lost", Policy::Best).await;
    submit(&ctx, &other, "c", "m3", 9).await.unwrap();
    let lost = reset::start((&ctx.store, &queue), NOW, &op, &other, reason("r"))
        .await
        .unwrap();
    queue.turns.lock().unwrap().clear();
    let swept = reset::sweep((&ctx.store, &events, &queue), NOW, later())
        .await
        .unwrap();
    assert_eq!(swept, vec![ResetOutcome::Done]);
    let archive = results(&ctx.store, &lost.archive_id).await.unwrap();
    assert_eq!(archive.total, 1);
    assert!(ranked(&ctx, &other).await.is_empty());
    assert_eq!(ranked(&ctx, &lb).await.len(), 2, "still before its fence");
    assert!(
        results(&ctx.store, &view.archive_id).await.is_err(),
        "not sealed yet"
    );
}

#[tokio::test]
async fn a_reset_is_refused_for_an_unknown_board_and_a_closed_one() {
    let ctx = ctx();
    let queue = MemoryJobQueue::default();
    let op = Operator("ops@studio".into());
    let deps = (&ctx.store, &queue);
    let unknown = LeaderboardId::parse("rst:none").unwrap();
    let err = reset::start(deps, NOW, &op, &unknown, reason("r"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "board_not_found");
    let lb = board(&ctx, "rst:closed", Policy::Best).await;
    let closed = leaderboard_rules::board::BoardStatus::Closed;
    assert!(
        ctx.store
            .set_status(&lb, Default::default(), closed)
            .await
            .unwrap()
    );
    let err = reset::start(deps, NOW, &op, &lb, reason("r"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_resettable");
    assert!(turns(&queue).is_empty(), "nothing handed on");
    let audit = (ctx.store)
        .audit_page(leaderboard_rules::page::Paging::new(None, 10))
        .await
        .unwrap();
    assert!(audit.records.is_empty(), "nothing audited");
}
