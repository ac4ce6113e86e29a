//! Reward tables: a family window's seal decides each place's reward once (ties at an
//! edge by the table's rank mode, an erased player's place unpaid), a player claims it
//! once however many claims race, an expired one is refused, and an erasure takes a
//! player's rewards with it.

use std::time::{Duration, Instant};

use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::moderation::erase;
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::rewards;
use leaderboard_core::service::seal::{self, SealOutcome, SealSettings};
use leaderboard_core::store::{RewardStatus, RewardStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::Period;
use serde_json::json;

use crate::fixtures::{Ctx, ctx, player, submit, window_board};

const SETTLED: SealSettings = SealSettings {
    settle: Duration::ZERO,
};

fn later() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

/// Family `rw`/`m` with a competition-mode table, and its DAILY window `key` (GLOBAL),
/// open for an hour more.
async fn window(ctx: &Ctx, key: &str) -> LeaderboardId {
    let mut family = CreateFamily::new("rw", "m", Policy::Best, &[], &[Period::Daily]);
    family.rewards = Some(json!({"rank_mode": "competition", "ranges": [
        {"from_rank": 1, "to_rank": 1, "reward": "gold", "quantity": 5},
        {"from_rank": 2, "to_rank": 3, "reward": "silver"},
        {"top_percent": 60, "reward": "chest"}]}));
    boards::create_family(&ctx.store, family).await.unwrap();
    window_board(ctx, "rw", Period::Daily, key, Policy::Best)
        .await
        .leaderboard_id
}

fn operator() -> Operator {
    Operator("arn:aws:iam::1:user/ops".into())
}

fn reason() -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(json!("test")),
    })
    .unwrap()
}

#[tokio::test]
async fn a_window_pays_each_place_once_by_its_table_and_a_player_claims_once() {
    let ctx = ctx();
    let events = MemoryEvents::default();
    let lb = window(&ctx, "2026-12-01").await;
    // 10 players: a 90; three on 80 (the edge of silver); 70; 60, 50 (erased);
    // 40, 30, 20. Competition places: 1, 2, 2, 2, 5, 6, 7, 8, 9, 10.
    let scores = [90, 80, 80, 80, 70, 60, 50, 40, 30, 20];
    for (i, s) in scores.iter().enumerate() {
        submit(&ctx, &lb, &format!("r{i}"), "m1", *s).await.unwrap();
    }
    erase::erase(&ctx, &player("r6"), reason(), &operator(), None, later())
        .await
        .unwrap();
    ctx.store.set_window_end(&lb, now_ms() - 1);
    let sealed = seal::seal(&ctx.store, &events, SETTLED, &lb, later())
        .await
        .unwrap();
    assert_eq!(sealed.boards[0].outcome, SealOutcome::Sealed);
    // 9 took part: the top 60% is places 1 to 6 (5.4 rounded up).
    let want = [
        ("r0", Some(("gold", 5, 1))),
        ("r1", Some(("silver", 1, 2))),
        ("r2", Some(("silver", 1, 2))),
        ("r3", Some(("silver", 1, 2))),
        ("r4", Some(("chest", 1, 5))),
        ("r5", Some(("chest", 1, 6))),
        ("r6", None),
        ("r7", None),
        ("r8", None),
        ("r9", None),
        ("absent", None),
    ];
    for (p, reward) in want {
        let got = rewards::list(&ctx.store, &player(p)).await.unwrap();
        let got: Vec<_> = (got.rewards.iter())
            .map(|r| (r.reward.as_str(), r.quantity, r.place))
            .collect();
        assert_eq!(got, reward.into_iter().collect::<Vec<_>>(), "{p}");
    }
    // One event, with every reward; a second run decides nothing new.
    let again = seal::seal(&ctx.store, &events, SETTLED, &lb, later())
        .await
        .unwrap();
    assert_eq!(again.boards[0].outcome, SealOutcome::AlreadySealed);
    let decided = events.decided();
    assert_eq!(decided.len(), 1);
    assert_eq!(decided[0].rewards_id, lb.as_str());
    assert_eq!(decided[0].total, 9);
    assert_eq!(decided[0].rewards.len(), 6);

    // Eight claims of r1's reward at once: one claims, seven are told that claim.
    let id = lb.as_str();
    let claims = (0..8).map(|i| {
        let by = format!("claimer-{i}");
        let (store, events) = (&ctx.store, &events);
        async move { rewards::claim(store, events, &player("r1"), id, &by).await }
    });
    let replies = futures::future::join_all(claims).await;
    let fresh: Vec<_> = (replies.iter())
        .map(|r| r.as_ref().unwrap())
        .filter(|r| !r.replayed)
        .collect();
    assert_eq!(fresh.len(), 1);
    let first = fresh[0].reward.claimed_by.clone();
    for r in &replies {
        let r = r.as_ref().unwrap();
        assert_eq!(r.reward.status, RewardStatus::Claimed);
        assert_eq!(r.reward.claimed_by, first);
    }
    assert_eq!(events.claimed().len(), 1);
    assert_eq!(events.claimed()[0].claim_id, format!("r1/{id}"));
    let listed = rewards::list(&ctx.store, &player("r1")).await.unwrap();
    assert!(listed.rewards.is_empty());
    assert_eq!(listed.claimed.len(), 1);

    // Another player's reward, an unknown one, and one of a player without rewards.
    let missing = rewards::claim(&ctx.store, &events, &player("r7"), id, "player").await;
    assert_eq!(missing.unwrap_err().code(), "reward_not_found");
    let unknown = rewards::claim(&ctx.store, &events, &player("r0"), "nope", "player").await;
    assert_eq!(unknown.unwrap_err().code(), "reward_not_found");

    // An expired reward is refused and not listed.
    let mut old = ctx.store.list_rewards(&player("r4"), 10).await.unwrap()[0].clone();
    old.reward_id = "rw:m:GLOBAL:DAILY:2026-01-01".into();
    old.expires_at = now_ms() - 1;
    ctx.store.put_rewards(&[old]).await.unwrap();
    let expired = rewards::claim(
        &ctx.store,
        &events,
        &player("r4"),
        "rw:m:GLOBAL:DAILY:2026-01-01",
        "player",
    )
    .await;
    assert_eq!(expired.unwrap_err().code(), "reward_expired");
    assert_eq!(
        rewards::list(&ctx.store, &player("r4"))
            .await
            .unwrap()
            .rewards
            .len(),
        1
    );

    // An erasure takes the player's rewards with it.
    erase::erase(&ctx, &player("r0"), reason(), &operator(), None, later())
        .await
        .unwrap();
    let erased = rewards::list(&ctx.store, &player("r0")).await.unwrap();
    assert!(erased.rewards.is_empty() && erased.claimed.is_empty());
}
