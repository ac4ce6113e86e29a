//! Ingest: idempotency by match id, the policies' folds, the conditional commit under
//! concurrent writers, board status and an index that is away.

use futures::future::join_all;
use leaderboard_core::service::boards;
use leaderboard_core::store::IndexWrites;
use leaderboard_core::store::ModerationStore;
use leaderboard_rules::board::{BoardStatus, Policy};
use leaderboard_rules::page::Paging;

use crate::fixtures::{assert_index_matches_store, board, ctx, standing, submit};

#[tokio::test]
async fn a_retried_match_returns_its_first_receipt_and_changes_nothing() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:retry", Policy::Best).await;
    let first = submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    assert!(!first.replayed);
    assert_eq!(
        (first.score.get(), first.rank, first.total),
        (100, Some(1), Some(1))
    );
    let again = submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    assert!(again.replayed);
    assert_eq!(
        (again.score, again.updated_at.clone()),
        (first.score, first.updated_at.clone())
    );
    let standing = standing(&ctx, &b, "alice").await.unwrap();
    assert_eq!(standing.version, 1);
    assert_eq!(
        ctx.store.stream_since(1).len(),
        1,
        "one write, one stream record"
    );
}

#[tokio::test]
async fn the_same_match_id_with_another_score_is_refused_and_changes_nothing() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:conflict", Policy::Sum).await;
    submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    let err = submit(&ctx, &b, "alice", "m1", 50).await.unwrap_err();
    assert_eq!(err.code(), "idempotency_conflict");
    let standing = standing(&ctx, &b, "alice").await.unwrap();
    assert_eq!((standing.score.get(), standing.version), (100, 1));
}

#[tokio::test]
async fn each_policy_keeps_what_it_promises() {
    let ctx = ctx();
    for (policy, want, applied) in [
        (Policy::Best, 200, [true, false, true]),
        (Policy::Min, 50, [true, true, false]),
        (Policy::Latest, 200, [true, true, true]),
        (Policy::Sum, 350, [true, true, true]),
    ] {
        let b = board(&ctx, &format!("ingest:{policy:?}").to_lowercase(), policy).await;
        let mut seen = Vec::new();
        for (m, s) in [("m1", 100), ("m2", 50), ("m3", 200)] {
            seen.push(
                submit(&ctx, &b, "alice", m, s)
                    .await
                    .unwrap()
                    .update_applied,
            );
        }
        let standing = standing(&ctx, &b, "alice").await.unwrap();
        assert_eq!(standing.score.get(), want, "{policy:?}");
        assert_eq!(seen, applied, "{policy:?}");
        assert_index_matches_store(&ctx, &b).await;
    }
}

#[tokio::test]
async fn concurrent_matches_of_one_player_each_count_once_despite_retries() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:race", Policy::Sum).await;
    // Thirty matches at once, each sent twice: the conditional commit makes the losers
    // of each race read again, and the receipts turn the second sends into replays.
    let sends = (1..=30).flat_map(|i| [i, i]).map(|i| {
        let (ctx, b) = (&ctx, &b);
        async move { submit(ctx, b, "alice", &format!("m{i}"), i).await }
    });
    let replies = join_all(sends).await;
    assert!(replies.iter().all(Result::is_ok), "{replies:?}");
    let replayed = replies
        .iter()
        .filter(|r| r.as_ref().unwrap().replayed)
        .count();
    assert_eq!(replayed, 30);
    let standing = standing(&ctx, &b, "alice").await.unwrap();
    assert_eq!(standing.score.get(), (1..=30).sum::<i64>());
    assert_eq!(standing.version, 30);
}

#[tokio::test]
async fn a_frozen_board_refuses_new_matches_and_still_replays_accepted_ones() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:frozen", Policy::Best).await;
    submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    boards::set_status(&ctx.store, &b, BoardStatus::Frozen)
        .await
        .unwrap();
    let err = submit(&ctx, &b, "alice", "m2", 500).await.unwrap_err();
    assert_eq!(err.code(), "board_not_active");
    let again = submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    assert!(again.replayed);
    let standing = standing(&ctx, &b, "alice").await.unwrap();
    assert_eq!(standing.score.get(), 100);
}

#[tokio::test]
async fn with_the_index_away_a_write_is_committed_and_answers_without_a_rank() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:away", Policy::Best).await;
    ctx.index.set_down(true);
    let reply = submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
    assert_eq!((reply.rank, reply.total), (None, None));
    assert!(standing(&ctx, &b, "alice").await.is_some());
    assert_eq!(
        ctx.store.stream_since(1).len(),
        1,
        "the stream carries it to the index"
    );
    ctx.index.set_down(false);
    let batch = ctx.store.stream_batch();
    let applied = ctx.index.apply_many(&batch.entries).await.unwrap();
    assert_eq!(applied.applied, [true]);
    assert_index_matches_store(&ctx, &b).await;
}

#[tokio::test]
async fn with_the_store_away_a_write_fails_and_nothing_changes() {
    let ctx = ctx();
    let b = board(&ctx, "ingest:store-away", Policy::Best).await;
    ctx.store.set_down(true);
    let err = submit(&ctx, &b, "alice", "m1", 100).await.unwrap_err();
    assert_eq!(err.code(), "store_unavailable");
    ctx.store.set_down(false);
    assert!(standing(&ctx, &b, "alice").await.is_none());
    assert!(
        ctx.index
            .snapshot(&b, leaderboard_rules::order::Direction::Desc)
            .is_empty()
    );
}

/// A result of `body` on `b` as the ingest route reads it, sent by "ops@studio".
async fn post(
    ctx: &crate::fixtures::Ctx,
    b: &leaderboard_rules::ids::LeaderboardId,
    p: &str,
    body: serde_json::Value,
) -> Result<
    leaderboard_core::service::write::reply::IngestReply,
    leaderboard_core::service::ServiceError,
> {
    use leaderboard_core::service::ingest;
    use leaderboard_core::service::operator::Operator;
    use leaderboard_core::service::write::request::{ScoreBody, SubmitScore};
    let body: ScoreBody = serde_json::from_str(&body.to_string()).unwrap();
    let actor = Operator("ops@studio".into());
    let req = SubmitScore::new(b.clone(), crate::fixtures::player(p), body, &actor)?;
    ingest::submit_score(ctx, req).await
}

#[tokio::test]
async fn a_correction_sets_the_standing_on_any_policy_is_audited_with_it_and_replays() {
    use serde_json::json;
    let ctx = ctx();
    for policy in [Policy::Best, Policy::Min, Policy::Latest, Policy::Sum] {
        let b = board(
            &ctx,
            &format!("ingest:set:{policy:?}").to_lowercase(),
            policy,
        )
        .await;
        submit(&ctx, &b, "alice", "m1", 100).await.unwrap();
        submit(&ctx, &b, "alice", "m2", 120).await.unwrap();
        let before = standing(&ctx, &b, "alice").await.unwrap();
        // A correction to 7: below a BEST board's best, above a MIN board's, a SUM reset.
        let fix = json!({"new_score": 7, "match_id": "fix-1", "op": "set", "reason": "cheat"});
        let reply = post(&ctx, &b, "alice", fix.clone()).await.unwrap();
        assert!(reply.update_applied && !reply.replayed, "{policy:?}");
        assert_eq!(reply.score.get(), 7);
        let after = standing(&ctx, &b, "alice").await.unwrap();
        assert_eq!((after.score.get(), after.version), (7, before.version + 1));
        // Audited, once, with the row: who, why, from what to what.
        let page = ctx.store.audit_page(Paging::new(None, 50)).await.unwrap();
        let audits: Vec<_> = (page.records.iter())
            .filter(|r| r.leaderboard_id.as_ref() == Some(&b))
            .collect();
        assert_eq!(audits.len(), 1, "{policy:?}");
        let a = audits[0];
        assert_eq!(
            (a.actor.as_str(), a.reason.as_str()),
            ("ops@studio", "cheat")
        );
        assert_eq!(a.detail["score"], 7);
        assert_eq!(a.detail["previous_score"], before.score.get());
        // A retry replays (no second audit); the same match without `op` is a conflict.
        let again = post(&ctx, &b, "alice", fix).await.unwrap();
        assert!(again.replayed && again.score.get() == 7);
        let plain = json!({"new_score": 7, "match_id": "fix-1"});
        let err = post(&ctx, &b, "alice", plain).await.unwrap_err();
        assert_eq!(err.code(), "idempotency_conflict");
        let page = ctx.store.audit_page(Paging::new(None, 50)).await.unwrap();
        let count = (page.records.iter()).filter(|r| r.leaderboard_id.as_ref() == Some(&b));
        assert_eq!(count.count(), 1);
        // The same standing again changes nothing, and says so.
        let same = json!({"new_score": 7, "match_id": "fix-2", "op": "set", "reason": "again"});
        assert!(!post(&ctx, &b, "alice", same).await.unwrap().update_applied);
        assert_index_matches_store(&ctx, &b).await;
    }
}

#[tokio::test]
async fn incr_is_sums_own_and_a_reason_comes_only_with_a_correction() {
    use serde_json::json;
    let ctx = ctx();
    let sum = board(&ctx, "ingest:incr", Policy::Sum).await;
    let best = board(&ctx, "ingest:incr-best", Policy::Best).await;
    for m in ["a", "b"] {
        let body = json!({"new_score": 5, "match_id": m, "op": "incr"});
        post(&ctx, &sum, "alice", body).await.unwrap();
    }
    assert_eq!(standing(&ctx, &sum, "alice").await.unwrap().score.get(), 10);
    let incr = json!({"new_score": 5, "match_id": "c", "op": "incr"});
    let err = post(&ctx, &best, "alice", incr).await.unwrap_err();
    assert_eq!(err.code(), "op_not_allowed");
    for (body, field) in [
        (
            json!({"new_score": 5, "match_id": "d", "op": "set"}),
            "reason",
        ),
        (
            json!({"new_score": 5, "match_id": "d", "op": "set", "reason": " "}),
            "reason",
        ),
        (
            json!({"new_score": 5, "match_id": "d", "reason": "why"}),
            "reason",
        ),
        (json!({"new_score": 5, "match_id": "d", "op": "decr"}), "op"),
        (json!({"new_score": 5, "match_id": "d", "op": 1}), "op"),
    ] {
        let err = post(&ctx, &best, "alice", body.clone()).await.unwrap_err();
        assert_eq!(err.code(), "invalid_request", "{body}");
        assert!(err.to_string().starts_with(field), "{body}: {err}");
    }
    assert!(
        standing(&ctx, &best, "alice").await.is_none(),
        "nothing written"
    );
}
