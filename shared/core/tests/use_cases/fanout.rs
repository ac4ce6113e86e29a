//! One match result fanned out to every scope and period of its family.

use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::scores::{self, MatchReply, MatchResult, Outcome};
use leaderboard_rules::board::Policy;
use leaderboard_rules::decimal::Amount;
use leaderboard_rules::score::Score;
use leaderboard_rules::time::now_ms;
use leaderboard_rules::window::Period;

use crate::fixtures::{Ctx, ctx, match_id, player};

async fn family(ctx: &Ctx, game: &str) {
    let mut req = CreateFamily::new(
        game,
        "ranked",
        Policy::Best,
        &["EU", "NA"],
        &[Period::AllTime, Period::Weekly, Period::Daily],
    );
    req.dense_ranks = true;
    boards::create_family(&ctx.store, req)
        .await
        .expect("family");
}

fn result(game: &str, region: &str, m: &str, score: i64, event_ts: Option<i64>) -> MatchResult {
    MatchResult {
        subscores: Vec::new(),
        metadata: None,
        game: game.into(),
        mode: "ranked".into(),
        region: region.into(),
        player: player("alice"),
        match_id: match_id(m),
        score: Amount::whole("score", Score::new("score", score).unwrap()),
        event_ts,
    }
}

fn outcome<'a>(reply: &'a MatchReply, scope: &str, period: Period) -> &'a Outcome {
    &reply
        .results
        .iter()
        .find(|r| r.scope == scope && r.period == period)
        .expect("a result per scope and period")
        .outcome
}

#[tokio::test]
async fn one_result_lands_once_on_every_scope_and_period() {
    let ctx = ctx();
    family(&ctx, "g1").await;
    let reply = scores::submit_match(&ctx, result("g1", "EU", "m1", 100, None))
        .await
        .unwrap();
    assert_eq!(reply.results.len(), 6, "GLOBAL and EU x three periods");
    assert!(reply.results.iter().all(|r| matches!(
        r.outcome,
        Outcome::Accepted {
            score,
            replayed: false,
            ..
        } if score.get() == 100
    )));
    assert_eq!(ctx.store.stream_since(1).len(), 6);
    let again = scores::submit_match(&ctx, result("g1", "EU", "m1", 100, None))
        .await
        .unwrap();
    assert!(
        again
            .results
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Accepted { replayed: true, .. }))
    );
    assert_eq!(ctx.store.stream_since(1).len(), 6, "a retry writes nothing");
}

#[tokio::test]
async fn a_closed_window_refuses_its_share_and_the_others_still_apply() {
    let ctx = ctx();
    family(&ctx, "g2").await;
    let two_days_ago = now_ms() - 2 * 86_400_000;
    let reply = scores::submit_match(&ctx, result("g2", "NA", "m1", 100, Some(two_days_ago)))
        .await
        .unwrap();
    for scope in ["GLOBAL", "NA"] {
        match outcome(&reply, scope, Period::Daily) {
            Outcome::Refused { refused } => assert_eq!(refused.code, "window_closed"),
            other => panic!("daily of two days ago accepted: {other:?}"),
        }
        assert!(matches!(
            outcome(&reply, scope, Period::AllTime),
            Outcome::Accepted { score, .. } if score.get() == 100
        ));
    }
}

#[tokio::test]
async fn an_unknown_region_is_refused_before_anything_is_written() {
    let ctx = ctx();
    family(&ctx, "g3").await;
    let err = scores::submit_match(&ctx, result("g3", "APAC", "m1", 100, None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unknown_region");
    assert!(ctx.store.stream_since(1).is_empty());
}

#[tokio::test]
async fn a_family_that_does_not_exist_is_not_found() {
    let ctx = ctx();
    let err = scores::submit_match(&ctx, result("nope", "EU", "m1", 1, None))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "family_not_found");
}
