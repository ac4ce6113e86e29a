//! Integrity over the in-memory twins: a held result changes nothing and its retry
//! replays; a result's place in the queue; concurrent approvals apply once; a rejected
//! match's retry is refused; the projector finds nothing to do for a held row.

use leaderboard::service::ServiceError;
use leaderboard::service::boards::{CreateBoard, create_board};
use leaderboard::service::integrity::{self, Decision};
use leaderboard::service::moderation::{Operator, Reason, ReasonBody};
use leaderboard::store::{HeldFilter, HeldStore};

use crate::fixtures::{Ctx, assert_index_matches_store, ctx, standing, submit};

fn reason() -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(serde_json::json!("reviewed")),
    })
    .unwrap()
}

async fn judged(ctx: &Ctx) -> leaderboard::ids::LeaderboardId {
    let req: CreateBoard = serde_json::from_value(serde_json::json!({
        "leaderboard_id": "review:best", "policy": "BEST",
        "integrity": {"max_score": 1000, "max_gain": 100},
    }))
    .unwrap();
    create_board(&ctx.store, &ctx.index, req).await.unwrap();
    leaderboard::ids::LeaderboardId::parse("review:best").unwrap()
}

#[tokio::test]
async fn a_held_result_changes_nothing_replays_and_two_approvals_apply_it_once() {
    let ctx = ctx();
    let b = judged(&ctx).await;
    submit(&ctx, &b, "ann", "m1", 500).await.unwrap();
    // A gain of 300: held; the same match again answers the same, and nothing moved.
    for replayed in [false, true] {
        let r = submit(&ctx, &b, "ann", "m2", 800).await.unwrap();
        let held = r.held.expect("held");
        assert_eq!((held.status, held.rule), ("HELD", "max_gain"));
        assert_eq!((r.update_applied, r.replayed), (false, replayed));
    }
    // A first result past the range: held, and the player has no standing.
    let r = submit(&ctx, &b, "bob", "x", 5000).await.unwrap();
    assert_eq!(r.held.map(|h| h.rule), Some("score_range"));
    assert_eq!(standing(&ctx, &b, "ann").await.unwrap().score.get(), 500);
    assert!(standing(&ctx, &b, "bob").await.is_none());
    assert_index_matches_store(&ctx, &b).await;
    let page = (ctx.store)
        .held_page("", &HeldFilter::default(), None, 10)
        .await
        .unwrap();
    let ids: Vec<String> = page.held.iter().map(|h| h.id()).collect();
    assert_eq!(page.held.len(), 2);
    // Two approvals of ann's at once: one applies, the other replays it.
    let op = Operator("ops".into());
    let (a, c) = tokio::join!(
        integrity::decide(&ctx, &op, &ids[0], Decision::Approve, reason()),
        integrity::decide(&ctx, &op, &ids[0], Decision::Approve, reason()),
    );
    let (a, c) = (a.unwrap(), c.unwrap());
    assert_eq!(
        u8::from(a.replayed) + u8::from(c.replayed),
        1,
        "{a:?} {c:?}"
    );
    assert_eq!(standing(&ctx, &b, "ann").await.unwrap().score.get(), 800);
    // Rejecting it now is a conflict; bob's is rejected, and his retry refused.
    let late = integrity::decide(&ctx, &op, &ids[0], Decision::Reject, reason()).await;
    assert!(
        matches!(late, Err(ServiceError::AlreadyDecided { .. })),
        "{late:?}"
    );
    integrity::decide(&ctx, &op, &ids[1], Decision::Reject, reason())
        .await
        .unwrap();
    let retry = submit(&ctx, &b, "bob", "x", 5000).await;
    assert!(
        matches!(retry, Err(ServiceError::ResultRejected(_))),
        "{retry:?}"
    );
    assert!(standing(&ctx, &b, "bob").await.is_none());
    assert_eq!(
        ctx.store
            .rejections("", &crate::fixtures::player("bob"))
            .await
            .unwrap(),
        1
    );
    assert_index_matches_store(&ctx, &b).await;
}

#[tokio::test]
async fn a_dry_run_with_the_index_away_judges_the_board_from_the_store() {
    let ctx = ctx();
    let req: CreateBoard = serde_json::from_value(serde_json::json!({
        "leaderboard_id": "review:plain", "policy": "BEST",
    }))
    .unwrap();
    create_board(&ctx.store, &ctx.index, req).await.unwrap();
    let b = leaderboard::ids::LeaderboardId::parse("review:plain").unwrap();
    submit(&ctx, &b, "ann", "m1", 500).await.unwrap();
    submit(&ctx, &b, "bob", "m1", 5000).await.unwrap();
    let rules = serde_json::json!({"max_score": 1000});
    let fresh = integrity::dry_run(&ctx, &b, rules.clone(), 10)
        .await
        .unwrap();
    ctx.index.set_down(true);
    let away = integrity::dry_run(&ctx, &b, rules, 10).await.unwrap();
    for reply in [fresh, away] {
        assert_eq!((reply.checked, reply.total), (2, 2));
        let held: Vec<_> = (reply.would_hold.iter())
            .map(|w| (w.player_id.to_string(), w.rule))
            .collect();
        assert_eq!(held, vec![("bob".to_string(), "score_range")]);
    }
}
