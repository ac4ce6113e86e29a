//! Integrity over the in-memory twins: a held result changes nothing and its retry
//! replays; a result's place in the queue; concurrent approvals apply once; a rejected
//! match's retry is refused; the projector finds nothing to do for a held row; the
//! figures a held result reports, a SUM approval's reached-at, a second decision, and a
//! ban after rejections (docs/integrity.md).

use leaderboard_core::service::ServiceError;
use leaderboard_core::service::boards::{CreateBoard, CreateFamily, create_board, create_family};
use leaderboard_core::service::integrity::{self, Decision};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::scores::{self, MatchResult};
use leaderboard_core::store::{HeldFilter, HeldStore};
use leaderboard_rules::decimal::Amount;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::page::Paging;
use leaderboard_rules::score::Score;
use serde_json::json;

use crate::fixtures::{Ctx, assert_index_matches_store, ctx, standing, submit};

fn reason() -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(serde_json::json!("reviewed")),
    })
    .unwrap()
}

async fn judged(ctx: &Ctx) -> leaderboard_rules::ids::LeaderboardId {
    let req: CreateBoard = serde_json::from_value(serde_json::json!({
        "leaderboard_id": "review:best", "policy": "BEST",
        "integrity": {"max_score": 1000, "max_gain": 100},
    }))
    .unwrap();
    create_board(&ctx.store, &ctx.index, req).await.unwrap();
    leaderboard_rules::ids::LeaderboardId::parse("review:best").unwrap()
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
        .held_page("", &HeldFilter::default(), Paging::new(None, 10))
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
    let b = leaderboard_rules::ids::LeaderboardId::parse("review:plain").unwrap();
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

async fn board_with(ctx: &Ctx, id: &str, policy: &str, rules: serde_json::Value) -> LeaderboardId {
    let req: CreateBoard = serde_json::from_value(serde_json::json!({
        "leaderboard_id": id, "policy": policy, "integrity": rules,
    }))
    .unwrap();
    create_board(&ctx.store, &ctx.index, req).await.unwrap();
    LeaderboardId::parse(id).unwrap()
}

/// The held results of standalone boards: (board, player, rule, value, limit).
async fn held_figures(ctx: &Ctx) -> Vec<(String, String, &'static str, i64, i64)> {
    let page = (ctx.store)
        .held_page("", &HeldFilter::default(), Paging::new(None, 100))
        .await
        .unwrap();
    (page.held.iter())
        .map(|h| {
            let (board, player) = (h.leaderboard_id.to_string(), h.player_id.to_string());
            (board, player, h.rule.code(), h.value, h.limit)
        })
        .collect()
}

#[tokio::test]
async fn a_held_results_value_and_limit_are_the_figures_docs_integrity_gives() {
    let ctx = ctx();
    // past_top: the value is the standing the result would leave; the limit the margin's
    // (checked first, so when both are passed it is the one reported), else the factor's.
    let both = board_with(
        &ctx,
        "fig:both",
        "BEST",
        json!({"max_top_factor": 1.5, "max_top_margin": 200}),
    )
    .await;
    let factor = board_with(
        &ctx,
        "fig:factor",
        "BEST",
        json!({"max_top_factor": 1.2, "max_top_margin": 500}),
    )
    .await;
    // On a MIN board lower is better: the limit is the top less the margin, or the top
    // divided by the factor.
    let min = board_with(
        &ctx,
        "fig:min",
        "MIN",
        json!({"max_top_factor": 2, "max_top_margin": 10}),
    )
    .await;
    let min_factor = board_with(
        &ctx,
        "fig:minf",
        "MIN",
        json!({"max_top_factor": 2, "max_top_margin": 90}),
    )
    .await;
    // max_gain's value is how far the standing would move in the board's direction:
    // positive on a MIN board too; on SUM what the result adds, a first result included.
    let min_gain = board_with(&ctx, "fig:ming", "MIN", json!({"max_gain": 20})).await;
    let sum_gain = board_with(&ctx, "fig:sumg", "SUM", json!({"max_gain": 100})).await;
    for b in [&both, &factor] {
        submit(&ctx, b, "top", "m0", 1000).await.unwrap();
    }
    for b in [&min, &min_factor] {
        submit(&ctx, b, "top", "m0", 100).await.unwrap();
    }
    submit(&ctx, &min_gain, "ann", "m0", 100).await.unwrap();
    submit(&ctx, &both, "ann", "m1", 2000).await.unwrap();
    submit(&ctx, &both, "bob", "m1", 1250).await.unwrap();
    submit(&ctx, &factor, "ann", "m1", 1300).await.unwrap();
    submit(&ctx, &min, "ann", "m1", 80).await.unwrap();
    submit(&ctx, &min_factor, "ann", "m1", 40).await.unwrap();
    submit(&ctx, &min_gain, "ann", "m1", 50).await.unwrap();
    submit(&ctx, &sum_gain, "ann", "m1", 500).await.unwrap();
    let mut got = held_figures(&ctx).await;
    got.sort();
    let row =
        |b: &str, p: &str, rule, value, limit| (b.to_owned(), p.to_owned(), rule, value, limit);
    let mut want = vec![
        row("fig:both", "ann", "past_top", 2000, 1200),
        row("fig:both", "bob", "past_top", 1250, 1200),
        row("fig:factor", "ann", "past_top", 1300, 1200),
        row("fig:min", "ann", "past_top", 80, 90),
        row("fig:minf", "ann", "past_top", 40, 50),
        row("fig:ming", "ann", "max_gain", 50, 20),
        row("fig:sumg", "ann", "max_gain", 500, 100),
    ];
    want.sort();
    assert_eq!(got, want);
}

#[tokio::test]
async fn an_approved_sum_result_keeps_the_totals_later_reached_at_and_a_second_decision_answers_the_first()
 {
    let ctx = ctx();
    let b = board_with(&ctx, "sum:late", "SUM", json!({"max_gain": 100})).await;
    let pause = || tokio::time::sleep(std::time::Duration::from_millis(5));
    submit(&ctx, &b, "ann", "m1", 50).await.unwrap();
    pause().await;
    assert!(
        submit(&ctx, &b, "ann", "m2", 500)
            .await
            .unwrap()
            .held
            .is_some()
    );
    pause().await;
    submit(&ctx, &b, "ann", "m3", 30).await.unwrap();
    let before = standing(&ctx, &b, "ann").await.unwrap();
    let page = ctx
        .store
        .held_page("", &HeldFilter::default(), Paging::new(None, 10))
        .await
        .unwrap();
    let (held, id) = (&page.held[0], page.held[0].id());
    assert!(held.reached_at < before.reached_at);
    let op = Operator("ops".into());
    let first = integrity::decide(&ctx, &op, &id, Decision::Approve, reason())
        .await
        .unwrap();
    assert!(!first.replayed && first.update_applied);
    // The total as it would stand had the result counted when it arrived: 580, reached
    // when its last result (m3) was, not moved back to the held result's arrival.
    let after = standing(&ctx, &b, "ann").await.unwrap();
    assert_eq!(
        (after.score.get(), after.reached_at),
        (580, before.reached_at)
    );
    assert_index_matches_store(&ctx, &b).await;
    // Decided again later: the same decision answers the first (replayed), the other
    // one is a conflict; neither is a 404 while the result's receipt is kept.
    let again = integrity::decide(&ctx, &op, &id, Decision::Approve, reason())
        .await
        .unwrap();
    assert!(again.replayed);
    assert_eq!(again.score, first.score);
    let other = integrity::decide(&ctx, &op, &id, Decision::Reject, reason()).await;
    assert!(
        matches!(other, Err(ServiceError::AlreadyDecided { .. })),
        "{other:?}"
    );
    assert_eq!(standing(&ctx, &b, "ann").await.unwrap().score.get(), 580);
}

#[tokio::test]
async fn a_ban_after_rejections_takes_the_players_standings_off_as_a_ban_does() {
    let ctx = ctx();
    let req: CreateFamily = serde_json::from_value(json!({
        "game": "g9", "mode": "ranked", "policy": "BEST", "regions": ["EU"],
        "periods": ["ALL_TIME"], "integrity": {"max_gain": 100, "ban_after_rejections": 1},
    }))
    .unwrap();
    create_family(&ctx.store, req).await.unwrap();
    let result = |m: &str, score: i64| ranked_result("g9", m, score);
    let first = scores::submit_match(&ctx, result("m1", 100)).await.unwrap();
    let boards: Vec<LeaderboardId> = (first.results.iter())
        .filter_map(|r| r.leaderboard_id.clone())
        .collect();
    assert_eq!(boards.len(), 2, "GLOBAL and EU");
    for b in &boards {
        assert!(standing(&ctx, b, "x").await.is_some());
    }
    scores::submit_match(&ctx, result("m2", 1000))
        .await
        .unwrap();
    let page = ctx
        .store
        .held_page("g9", &HeldFilter::default(), Paging::new(None, 10))
        .await
        .unwrap();
    assert_eq!(page.held.len(), 2, "held on both boards");
    let op = Operator("ops".into());
    let id = page.held[0].id();
    let rejected = integrity::decide(&ctx, &op, &id, Decision::Reject, reason())
        .await
        .unwrap();
    assert!(rejected.banned);
    for b in &boards {
        assert!(
            standing(&ctx, b, "x").await.is_none(),
            "{b}: still standing"
        );
        assert_index_matches_store(&ctx, b).await;
    }
}

#[tokio::test]
async fn a_match_held_on_two_boards_is_listed_once_decided_once_and_one_rejection() {
    let ctx = ctx();
    let req: CreateFamily = serde_json::from_value(json!({
        "game": "g8", "mode": "ranked", "policy": "BEST", "regions": ["EU"],
        "periods": ["ALL_TIME"], "integrity": {"max_score": 500, "ban_after_rejections": 2},
    }))
    .unwrap();
    create_family(&ctx.store, req).await.unwrap();
    let result = |m: &str, score: i64| ranked_result("g8", m, score);
    scores::submit_match(&ctx, result("m1", 900)).await.unwrap();
    let signer = leaderboard_rules::cursor::CursorSigner::new("test");
    let queue = integrity::list(&ctx, &signer, "g8", &HeldFilter::default(), None, 25)
        .await
        .unwrap();
    assert_eq!(queue.held.len(), 1, "one match");
    assert_eq!(queue.held[0].boards.len(), 2, "GLOBAL and EU");
    let op = Operator("ops".into());
    // Decided on its second board's id: both boards rejected, one rejection, no ban.
    let id = queue.held[0].boards[1].id.clone();
    let r = integrity::decide(&ctx, &op, &id, Decision::Reject, reason())
        .await
        .unwrap();
    assert_eq!((r.boards.len(), r.banned), (2, false));
    assert_eq!(
        ctx.store
            .rejections("g8", &crate::fixtures::player("x"))
            .await
            .unwrap(),
        1
    );
    // The other way now: 409; the same way again: a replay.
    let again = integrity::decide(&ctx, &op, &queue.held[0].id, Decision::Approve, reason()).await;
    assert!(
        matches!(again, Err(ServiceError::AlreadyDecided { .. })),
        "{again:?}"
    );
    let replay = integrity::decide(&ctx, &op, &queue.held[0].id, Decision::Reject, reason())
        .await
        .unwrap();
    assert!(replay.replayed);
    let empty = integrity::list(&ctx, &signer, "g8", &HeldFilter::default(), None, 25)
        .await
        .unwrap();
    assert!(empty.held.is_empty());
    // A second rejected match reaches the count.
    scores::submit_match(&ctx, result("m2", 800)).await.unwrap();
    let queue = integrity::list(&ctx, &signer, "g8", &HeldFilter::default(), None, 25)
        .await
        .unwrap();
    let r = integrity::decide(&ctx, &op, &queue.held[0].id, Decision::Reject, reason())
        .await
        .unwrap();
    assert!(r.banned, "two rejected matches");
}

/// Player x's result `score` in match `m` of `game`'s ranked mode, from the EU.
fn ranked_result(game: &str, m: &str, score: i64) -> MatchResult {
    MatchResult {
        subscores: Vec::new(),
        metadata: None,
        game: game.into(),
        mode: "ranked".into(),
        region: "EU".into(),
        player: crate::fixtures::player("x"),
        match_id: crate::fixtures::match_id(m),
        score: Amount::whole("score", Score::new("score", score).unwrap()),
        event_ts: None,
    }
}
