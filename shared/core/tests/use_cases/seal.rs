//! Period end: a closed window sealed once (however many runs), resumed where a run
//! stopped, its history equal to the final standings, and erased players unnamed.

use std::time::{Duration, Instant};

use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::moderation::erase;
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::seal::{
    self, HistoryRequest, PAGE, SealOutcome, SealSettings, history, results,
};
use leaderboard_core::store::{RankedReads, SealStore};
use leaderboard_rules::board::{Board, Policy};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction};
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::Period;

use crate::fixtures::{Ctx, ctx, player, submit, window_board};

const SETTLED: SealSettings = SealSettings {
    settle: Duration::ZERO,
};

/// A SEASON window of game `g`, mode `m`, scope GLOBAL, open for an hour more: the
/// test closes it with [`close`] once its writes are in, however slow the machine.
async fn season_board(ctx: &Ctx, key: &str, policy: Policy) -> Board {
    window_board(ctx, "g", Period::Season, key, policy).await
}

/// Ends the board's window a moment ago, and checks that a write is now refused.
async fn close(ctx: &Ctx, lb: &LeaderboardId) {
    ctx.store.set_window_end(lb, now_ms() - 1);
    let late = submit(ctx, lb, "late", "m-late", 1).await;
    assert_eq!(late.unwrap_err().code(), "window_closed");
}

fn later() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

#[tokio::test]
async fn a_window_is_sealed_once_however_often_the_schedule_runs_and_history_matches_it() {
    let ctx = ctx();
    let events = MemoryEvents::default();
    let board = season_board(&ctx, "s1", Policy::Best).await;
    let lb = &board.leaderboard_id;
    for i in 0..30_i64 {
        let p = format!("p{i:02}");
        submit(&ctx, lb, &p, "m1", (i * 37) % 11).await.unwrap();
    }
    // Before the window closes nothing is due, and an explicit seal is refused.
    let early = seal::sweep(&ctx.store, &events, SETTLED, later())
        .await
        .unwrap();
    assert!(early.boards.is_empty());
    let refused = seal::seal(&ctx.store, &events, SETTLED, lb, later()).await;
    assert_eq!(refused.unwrap_err().code(), "not_sealable");
    assert!(matches!(
        results(&ctx.store, lb).await.unwrap_err().code(),
        "not_sealed"
    ));
    close(&ctx, lb).await;
    let first = seal::sweep(&ctx.store, &events, SETTLED, later())
        .await
        .unwrap();
    assert_eq!(first.boards[0].outcome, SealOutcome::Sealed);
    assert_eq!(first.boards[0].recorded, 30);
    // Again: the board is marked sealed and passed by; a direct call answers sealed.
    let again = seal::sweep(&ctx.store, &events, SETTLED, later())
        .await
        .unwrap();
    assert!(again.boards.is_empty());
    let direct = seal::seal(&ctx.store, &events, SETTLED, lb, later())
        .await
        .unwrap();
    assert_eq!(direct.boards[0].outcome, SealOutcome::AlreadySealed);
    let published = events.published();
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].seal_id, lb.as_str());
    assert_eq!(published[0].total, 30);

    let truth = ctx
        .store
        .ranked_after(BoardOrder::new(lb, Direction::Desc), None, 100)
        .await
        .unwrap();
    let sealed = results(&ctx.store, lb).await.unwrap();
    assert_eq!(sealed.total, 30);
    let named: Vec<String> = sealed
        .entries
        .iter()
        .map(|e| e.player_id.as_ref().unwrap().to_string())
        .collect();
    let expected: Vec<String> = truth.iter().map(|k| k.player.clone()).collect();
    assert_eq!(named, expected);
    assert_eq!(published[0].top.len(), 30);
    // Every participant's history names their final rank and score.
    for (rank, key) in truth.iter().enumerate() {
        let req = HistoryRequest::parse("g", "m", &key.player, None, None, None, None).unwrap();
        let h = history(&ctx.store, req).await.unwrap();
        assert_eq!(h.windows.len(), 1, "{}", key.player);
        assert_eq!(h.windows[0].rank, rank as u64 + 1);
        assert_eq!(h.windows[0].score.get(), key.score.get());
        assert_eq!(h.windows[0].window.leaderboard_id, *lb);
    }
    // Erased: history gone, the place in the results stays, unnamed.
    let winner = player(&truth[0].player);
    let reason = Reason::parse(ReasonBody {
        reason: Some(serde_json::json!("gdpr")),
    })
    .unwrap();
    let op = Operator("arn:aws:iam::1:user/ops".into());
    erase::erase(&ctx, &winner, reason, &op, None, later())
        .await
        .unwrap();
    let after = results(&ctx.store, lb).await.unwrap();
    assert_eq!(after.entries[0].rank, 1);
    assert!(after.entries[0].player_id.is_none());
    assert!(after.entries[1].player_id.is_some());
    let req = HistoryRequest::parse("g", "m", winner.as_str(), None, None, None, None).unwrap();
    assert!(history(&ctx.store, req).await.unwrap().windows.is_empty());
}

#[tokio::test]
async fn a_run_out_of_time_leaves_its_place_and_the_next_goes_on_from_it() {
    let ctx = ctx();
    let events = MemoryEvents::default();
    let board = season_board(&ctx, "s2", Policy::Min).await;
    let lb = &board.leaderboard_id;
    let n = 2 * PAGE + 345;
    for i in 0..n {
        let p = format!("q{i:05}");
        submit(&ctx, lb, &p, "m1", (i as i64 * 7919) % 1_000)
            .await
            .unwrap();
    }
    close(&ctx, lb).await;
    // No time at all: each run still records one page, then stops.
    let mut runs = 0;
    loop {
        runs += 1;
        let r = seal::sweep(&ctx.store, &events, SETTLED, Instant::now())
            .await
            .unwrap();
        if r.done {
            assert_eq!(r.boards.len(), 1);
            assert_eq!(r.boards[0].outcome, SealOutcome::Sealed);
            break;
        }
        assert_eq!(r.boards[0].outcome, SealOutcome::InProgress);
        assert_eq!(r.boards[0].recorded, (runs * PAGE) as u64);
    }
    assert_eq!(runs, 3);
    assert_eq!(events.published().len(), 1);
    assert!(
        ctx.store
            .get_seal(lb)
            .await
            .unwrap()
            .unwrap()
            .after
            .is_none()
    );
    // Ranks over the pages are continuous and in MIN order.
    let truth = ctx
        .store
        .ranked_after(BoardOrder::new(lb, Direction::Asc), None, 10_000)
        .await
        .unwrap();
    assert_eq!(truth.len(), n);
    for i in [0, PAGE - 1, PAGE, 2 * PAGE, n - 1] {
        let key = &truth[i];
        let req =
            HistoryRequest::parse("g", "m", &key.player, None, Some("SEASON"), None, None).unwrap();
        let h = history(&ctx.store, req).await.unwrap();
        assert_eq!(
            (h.windows[0].rank, h.windows[0].score.get()),
            (i as u64 + 1, key.score.get())
        );
    }
    assert_eq!(results(&ctx.store, lb).await.unwrap().entries.len(), 1_000);
}

#[tokio::test]
async fn history_pages_newest_first_across_periods_with_no_gap_or_repeat() {
    use leaderboard_core::store::{HistoryRow, SealedWindow};
    let ctx = ctx();
    let day = 86_400_000_i64;
    let row = |period: Period, key: &str, end: i64| HistoryRow {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        player_id: player("ann"),
        window: SealedWindow {
            leaderboard_id: LeaderboardId::parse(&format!("g:m:GLOBAL:{}:{key}", period.as_str()))
                .unwrap(),
            game: "g".into(),
            mode: "m".into(),
            scope: "GLOBAL".into(),
            period,
            window: key.into(),
            start: end - day,
            end,
            scores: Default::default(),
        },
        rank: 1,
        score: end / day,
        reached_at: end - 1,
        league: None,
    };
    // Seven days and the week they close share an end (Monday midnight), as in reality.
    let mut rows: Vec<HistoryRow> = (1..=14)
        .map(|d| row(Period::Daily, &format!("d{d:02}"), d * day))
        .collect();
    rows.push(row(Period::Weekly, "w1", 7 * day));
    rows.push(row(Period::Weekly, "w2", 14 * day));
    // Another family's row is not in this one's history.
    let mut other = row(Period::Daily, "x", 3 * day);
    other.window.game = "h".into();
    rows.push(other);
    ctx.store.put_history(&rows).await.unwrap();
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let req = HistoryRequest::parse("g", "m", "ann", None, None, Some("3"), cursor.as_deref())
            .unwrap();
        let page = history(&ctx.store, req).await.unwrap();
        seen.extend(page.windows.iter().map(|w| w.window.window.clone()));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    let mut expected = vec!["w2".to_owned()];
    expected.extend((8..=14).rev().map(|d| format!("d{d:02}")));
    expected.push("w1".into());
    expected.extend((1..=7).rev().map(|d| format!("d{d:02}")));
    assert_eq!(seen, expected);
    // One period alone.
    let req = HistoryRequest::parse("g", "m", "ann", None, Some("WEEKLY"), None, None).unwrap();
    let weeks: Vec<String> = history(&ctx.store, req)
        .await
        .unwrap()
        .windows
        .iter()
        .map(|w| w.window.window.clone())
        .collect();
    assert_eq!(weeks, ["w2", "w1"]);
}
