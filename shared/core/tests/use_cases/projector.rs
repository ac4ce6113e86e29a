//! The projector: stream batches applied version-checked, failures named for retry,
//! boards found not ready reported for repair.

use leaderboard_core::service::projector::project;
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::store::Health;
use leaderboard_core::store::IndexUpkeep;
use leaderboard_rules::board::Policy;

use crate::fixtures::{assert_index_matches_store, board, ctx, ctx_reporting, populate};

#[tokio::test]
async fn a_batch_applies_once_and_applying_it_again_changes_nothing() {
    let ctx = ctx();
    let b = board(&ctx, "proj:once", Policy::Best).await;
    ctx.index.set_down(true);
    populate(&ctx, &b, 12).await;
    ctx.index.set_down(false);
    let (retry, stats) = project(&ctx.index, &Reporter::default(), ctx.store.stream_batch()).await;
    assert!(retry.is_empty());
    assert_eq!((stats.applied, stats.stale), (12, 0));
    assert_index_matches_store(&ctx, &b).await;
    let mut reversed = ctx.store.stream_batch();
    reversed.entries.reverse();
    let (_, stats) = project(&ctx.index, &Reporter::default(), reversed).await;
    assert_eq!((stats.applied, stats.stale), (0, 12));
    assert_index_matches_store(&ctx, &b).await;
}

#[tokio::test]
async fn when_the_index_fails_every_standing_of_the_batch_is_named_for_retry() {
    let ctx = ctx();
    let b = board(&ctx, "proj:retry", Policy::Best).await;
    populate(&ctx, &b, 5).await;
    ctx.index.set_down(true);
    let batch = ctx.store.stream_batch();
    let want = batch.sequence_numbers.clone();
    let (retry, stats) = project(&ctx.index, &Reporter::default(), batch).await;
    assert_eq!(retry, want);
    assert_eq!(stats.failed, 5);
}

#[tokio::test]
async fn a_board_found_not_ready_is_reported_once_per_claim() {
    let (ctx, reports) = ctx_reporting();
    let b = board(&ctx, "proj:report", Policy::Best).await;
    populate(&ctx, &b, 3).await;
    ctx.index.wipe(&b);
    for _ in 0..3 {
        project(&ctx.index, &ctx.repairs, ctx.store.stream_batch()).await;
    }
    let taken = reports.taken();
    assert_eq!(taken.len(), 1, "one report per claim: {taken:?}");
    assert_eq!(
        (taken[0].rebuild.clone(), taken[0].health),
        (b.clone(), Health::Missing)
    );
    assert_eq!(ctx.index.health(&[b]).await.unwrap(), [Health::Missing]);
}
