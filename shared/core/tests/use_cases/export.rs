//! Exports: a board written to a file a part at a time over many runs, each standing
//! once in rank order, the standings that moved during it left out and counted, and one
//! run at a time.

use std::time::{Duration, Instant};

use leaderboard_core::memory::{MemoryFiles, MemoryJobQueue};
use leaderboard_core::service::export::{self, ExportOutcome, ExportSettings};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::store::{ExportStore, RankedReads};
use leaderboard_rules::export::ExportStatus;
use leaderboard_rules::order::{BoardOrder, Direction};

use crate::fixtures::{ctx, submit};

fn reason(text: &str) -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(text.into()),
    })
    .unwrap()
}

#[tokio::test]
async fn a_board_is_exported_whole_over_many_runs_and_movers_are_left_out_once() {
    let ctx = ctx();
    let scores: Vec<(String, i64)> = (0..2_345).map(|i| (format!("p{i}"), i % 97)).collect();
    let refs: Vec<(&str, i64)> = scores.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let lb = leaderboard_core::memory::seed(
        &ctx,
        "exp:b",
        leaderboard_rules::board::Policy::Best,
        &refs,
    )
    .await;
    let before = ctx
        .store
        .ranked_after(BoardOrder::new(&lb, Direction::Desc), None, 10_000)
        .await
        .unwrap();
    let (files, queue) = (MemoryFiles::default(), MemoryJobQueue::default());
    let deps = (&ctx.store, &files, &queue);
    let settings = ExportSettings {
        part_bytes: 8 * 1024,
        settle: Duration::ZERO,
        ..ExportSettings::default()
    };
    let op = Operator("ops@studio".into());
    let started = export::start(deps, settings, &op, &lb, reason("prizes"))
        .await
        .unwrap();
    assert_eq!(started.status, ExportStatus::Running);
    assert!(started.url.is_none());
    let turn = queue.exports()[0].clone();
    assert_eq!(turn.export_id, started.export_id);

    // Written after the export began: p7 moves up, a newcomer arrives.
    tokio::time::sleep(Duration::from_millis(5)).await;
    submit(&ctx, &lb, "p7", "m-p7-again", 500).await.unwrap();
    submit(&ctx, &lb, "newcomer", "m-new", 400).await.unwrap();

    // Each run out of time hands the job on after at least one page.
    let past = Instant::now();
    let mut runs = 0;
    loop {
        runs += 1;
        match export::run(deps, settings, &turn, past).await.unwrap() {
            ExportOutcome::HandedOn => continue,
            ExportOutcome::Done => break,
            ExportOutcome::Passed => panic!("a released job is taken by the next run"),
        }
    }
    assert_eq!(runs, 3, "1,000 standings a page, a run a page");
    assert_eq!(queue.exports().len(), 3, "asked once, handed on twice");
    // Done: a later run passes.
    let far = Instant::now() + Duration::from_secs(60);
    assert_eq!(
        export::run(deps, settings, &turn, far).await.unwrap(),
        ExportOutcome::Passed
    );

    let job = ctx
        .store
        .get_export(&lb, &turn.export_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(job.status, ExportStatus::Done);
    assert!(job.parts.len() >= 3, "{} parts", job.parts.len());
    assert_eq!(
        (job.rows, job.moved),
        (2_344, 2),
        "p7 and the newcomer moved"
    );
    let file = files.file(&job.object).expect("the file is whole");
    assert_eq!(job.bytes, file.len() as u64);
    let mut reader = csv::Reader::from_reader(file.as_slice());
    let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
    let expected: Vec<_> = before.iter().filter(|k| k.player != "p7").collect();
    assert_eq!(rows.len(), expected.len());
    for ((row, key), rank) in rows.iter().zip(&expected).zip(1..) {
        assert_eq!(
            &row[0],
            rank.to_string(),
            "ranks count from 1 without a gap"
        );
        assert_eq!(&row[1], key.player);
        assert_eq!(&row[3], key.score.get().to_string());
    }

    let view = export::view((&ctx.store, &files), settings, &lb, &turn.export_id)
        .await
        .unwrap();
    assert_eq!(view.status, ExportStatus::Done);
    assert!(view.url.is_some_and(|u| u.contains(&job.object)));
    let listed = export::list((&ctx.store, &files), settings, &lb)
        .await
        .unwrap();
    assert_eq!(listed.exports.len(), 1);
    let page = leaderboard_core::store::ModerationStore::audit_page(
        &ctx.store,
        leaderboard_rules::page::Paging::new(None, 10),
    )
    .await
    .unwrap();
    let audited = page
        .records
        .iter()
        .find(|r| r.id == turn.export_id)
        .unwrap();
    assert_eq!(audited.action, leaderboard_core::store::AuditAction::Export);
    assert_eq!(
        (audited.actor.as_str(), audited.reason.as_str()),
        ("ops@studio", "prizes")
    );
}

#[tokio::test]
async fn one_run_at_a_time_and_a_crashed_run_is_taken_over_after_its_lease() {
    let ctx = ctx();
    let lb = leaderboard_core::memory::seed(
        &ctx,
        "exp:c",
        leaderboard_rules::board::Policy::Best,
        &[("a", 3), ("b", 2), ("c", 1)],
    )
    .await;
    let (files, queue) = (MemoryFiles::default(), MemoryJobQueue::default());
    let deps = (&ctx.store, &files, &queue);
    let settings = ExportSettings {
        settle: Duration::from_millis(300),
        ..ExportSettings::default()
    };
    let op = Operator("ops@studio".into());
    let started = export::start(deps, settings, &op, &lb, reason("support"))
        .await
        .unwrap();
    let id = started.export_id;
    // A run that claimed it and crashed: its lease holds the job for a minute.
    let now = leaderboard_rules::time::now_ms();
    let crashed = ctx
        .store
        .claim_export(&lb, &id, "crashed", now, now + 60_000)
        .await;
    assert!(crashed.unwrap().is_some());
    let turn = queue.exports()[0].clone();
    let far = Instant::now() + Duration::from_secs(60);
    assert_eq!(
        export::run(deps, settings, &turn, far).await.unwrap(),
        ExportOutcome::Passed,
        "held by the crashed run's lease"
    );
    // Its lease runs out (here: set in the past), and the next run finishes the file,
    // its walk begun once the settle time after the request has passed.
    let mut job = ctx.store.get_export(&lb, &id).await.unwrap().unwrap();
    job.lease_until = now - 1;
    assert!(ctx.store.save_export(&job).await.unwrap());
    assert_eq!(
        export::run(deps, settings, &turn, far).await.unwrap(),
        ExportOutcome::Done
    );
    assert!(leaderboard_rules::time::now_ms() >= job.requested_at + 300);
    let job = ctx.store.get_export(&lb, &id).await.unwrap().unwrap();
    let text = String::from_utf8(files.file(&job.object).unwrap()).unwrap();
    let firsts: Vec<&str> = text.lines().map(|l| l.split(',').nth(1).unwrap()).collect();
    assert_eq!(firsts, ["player_id", "a", "b", "c"]);
    assert_eq!(job.parts.len(), 1, "a small board is one part");
    // An unknown export is a 404, not an empty view.
    let missing = export::view((&ctx.store, &files), settings, &lb, "nope").await;
    assert_eq!(missing.unwrap_err().code(), "export_not_found");
}

#[tokio::test]
async fn an_empty_board_exports_as_its_header_alone() {
    let ctx = ctx();
    let lb = crate::fixtures::board(&ctx, "exp:e", leaderboard_rules::board::Policy::Best).await;
    let (files, queue) = (MemoryFiles::default(), MemoryJobQueue::default());
    let deps = (&ctx.store, &files, &queue);
    let settings = ExportSettings {
        settle: Duration::ZERO,
        ..ExportSettings::default()
    };
    let op = Operator("ops@studio".into());
    let started = export::start(deps, settings, &op, &lb, reason("empty"))
        .await
        .unwrap();
    let turn = queue.exports()[0].clone();
    let far = Instant::now() + Duration::from_secs(60);
    let outcome = export::run(deps, settings, &turn, far).await.unwrap();
    assert_eq!(outcome, ExportOutcome::Done);
    let job = ctx
        .store
        .get_export(&lb, &started.export_id)
        .await
        .unwrap()
        .unwrap();
    let file = String::from_utf8(files.file(&job.object).unwrap()).unwrap();
    assert_eq!(
        file,
        "rank,player_id,display_name,score,reached_at,metadata\r\n"
    );
    assert_eq!((job.rows, job.parts.len()), (0, 1));
    // An export of a board that does not exist is refused before anything is stored.
    let nowhere = leaderboard_rules::ids::LeaderboardId::parse("exp:none").unwrap();
    let refused = export::start(deps, settings, &op, &nowhere, reason("x")).await;
    assert_eq!(refused.unwrap_err().code(), "board_not_found");
    assert_eq!(queue.exports().len(), 1, "nothing handed on");
    // A queue that refuses the turn: the request fails, and the export is marked failed
    // rather than listed as running with no run to write it.
    queue.down.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(2)).await; // a later id, listed first
    let refused = export::start(deps, settings, &op, &lb, reason("queue down")).await;
    assert_eq!(refused.unwrap_err().code(), "store_unavailable");
    let listed = export::list((&ctx.store, &files), settings, &lb)
        .await
        .unwrap();
    let statuses: Vec<_> = listed.exports.iter().map(|e| e.status).collect();
    assert_eq!(statuses, [ExportStatus::Failed, ExportStatus::Done]);
}
