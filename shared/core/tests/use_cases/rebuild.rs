//! The rebuild: resumable across invocations, exact at the swap, restarted when the
//! index is wiped under it, refused while another holds the lease.

use leaderboard_core::store::IndexUpkeep;
use std::time::{Duration, Instant};

use leaderboard_core::service::rebuild::{self, Outcome};
use leaderboard_core::store::{Health, RebuildStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;

use crate::fixtures::{Ctx, assert_index_matches_store, board, ctx, populate, submit};

async fn once(ctx: &Ctx, b: &LeaderboardId, deadline: Instant) -> Outcome {
    rebuild::rebuild_board(ctx, b, deadline)
        .await
        .unwrap()
        .outcome
}

#[tokio::test]
async fn a_rebuild_resumes_page_by_page_and_misses_no_write_made_meanwhile() {
    let ctx = ctx();
    let b = board(&ctx, "rebuild:resume", Policy::Best).await;
    populate(&ctx, &b, 40).await;
    ctx.index.wipe(&b);
    // A deadline already past: each invocation loads one page (one shard here).
    let mut outcomes = Vec::new();
    for i in 0..10 {
        let outcome = once(&ctx, &b, Instant::now()).await;
        outcomes.push(outcome);
        if outcome == Outcome::Rebuilt {
            break;
        }
        submit(&ctx, &b, &format!("late{i}"), &format!("ml{i}"), 1_000 + i)
            .await
            .unwrap();
    }
    let shards = ctx.store.shard_count() as usize;
    assert_eq!(outcomes.len(), shards, "{outcomes:?}");
    assert_eq!(outcomes.last(), Some(&Outcome::Rebuilt));
    assert!(ctx.store.get_checkpoint(&b).await.unwrap().is_none());
    assert_eq!(
        ctx.index.health(std::slice::from_ref(&b)).await.unwrap(),
        [Health::Ready]
    );
    assert_index_matches_store(&ctx, &b).await;
}

#[tokio::test]
async fn a_wipe_during_a_rebuild_makes_it_start_over_and_still_end_exact() {
    let ctx = ctx();
    let b = board(&ctx, "rebuild:wiped", Policy::Best).await;
    populate(&ctx, &b, 20).await;
    ctx.index.wipe(&b);
    assert_eq!(once(&ctx, &b, Instant::now()).await, Outcome::InProgress);
    ctx.index.wipe(&b);
    let far = Instant::now() + Duration::from_secs(60);
    let mut outcome = once(&ctx, &b, far).await;
    for _ in 0..3 {
        if outcome == Outcome::Rebuilt {
            break;
        }
        outcome = once(&ctx, &b, far).await;
    }
    assert_eq!(outcome, Outcome::Rebuilt);
    assert_index_matches_store(&ctx, &b).await;
}

#[tokio::test]
async fn another_rebuild_holding_the_lease_makes_this_one_wait() {
    let ctx = ctx();
    let b = board(&ctx, "rebuild:busy", Policy::Best).await;
    populate(&ctx, &b, 5).await;
    ctx.index.wipe(&b);
    assert!(
        ctx.index
            .acquire_lease(&b, "someone-else", Duration::from_secs(30))
            .await
            .unwrap()
    );
    let far = Instant::now() + Duration::from_secs(60);
    assert_eq!(once(&ctx, &b, far).await, Outcome::Busy);
    ctx.index.release_lease(&b, "someone-else").await.unwrap();
    assert_eq!(once(&ctx, &b, far).await, Outcome::Rebuilt);
    assert_index_matches_store(&ctx, &b).await;
}
