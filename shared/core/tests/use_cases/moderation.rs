//! Moderation: removals that stay removed whatever the stream redelivers, bans across a
//! game's boards, erasures that leave nothing and resume where they stopped.

use leaderboard_core::store::IndexReads;
use leaderboard_rules::order::BoardOrder;
use leaderboard_rules::page::Paging;
use std::time::{Duration, Instant};

use leaderboard_core::service::ServiceError;
use leaderboard_core::service::moderation::{ban, erase, remove};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::projector::project;
use leaderboard_core::service::rebuild::rebuild_board;
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::store::{ModerationStore, StandingStore};
use leaderboard_rules::board::Policy;

use crate::fixtures::{assert_index_matches_store, board, ctx, player, populate, submit};

fn reason(text: &str) -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(serde_json::json!(text)),
    })
    .unwrap()
}

fn op() -> Operator {
    Operator("arn:aws:iam::1:user/ops".into())
}

fn later() -> Instant {
    Instant::now() + Duration::from_secs(60)
}

#[tokio::test]
async fn a_removal_survives_every_replay_of_the_stream_and_a_rebuild_and_a_new_result_starts_over()
{
    let ctx = ctx();
    let b = board(&ctx, "mod:remove", Policy::Sum).await;
    populate(&ctx, &b, 6).await;
    // A second result of p03's makes its history longer than one record.
    submit(&ctx, &b, "p03", "m-extra", 5).await.unwrap();
    let reply = remove::remove_entry(&ctx, &b, &player("p03"), reason("cheat"), &op())
        .await
        .unwrap();
    assert_eq!(reply.taken_off.previous_score.get(), 45);
    assert_eq!(reply.taken_off.previous_rank, Some(3));
    assert_index_matches_store(&ctx, &b).await;
    // The whole stream again, in order and reversed: the removal holds.
    project(&ctx.index, &Reporter::default(), ctx.store.stream_batch()).await;
    let mut reversed = ctx.store.stream_batch();
    reversed.entries.reverse();
    project(&ctx.index, &Reporter::default(), reversed).await;
    assert_index_matches_store(&ctx, &b).await;
    // Wiped and rebuilt, then the stream once more: still removed.
    ctx.index.wipe(&b);
    rebuild_board(&ctx, &b, later()).await.unwrap();
    project(&ctx.index, &Reporter::default(), ctx.store.stream_batch()).await;
    assert_index_matches_store(&ctx, &b).await;
    let (top, total) = ctx
        .index
        .top(
            BoardOrder::new(&b, leaderboard_rules::order::Direction::Desc),
            10,
        )
        .await
        .unwrap();
    assert_eq!(total, 5);
    assert!(top.iter().all(|k| k.player != "p03"));
    // A retried match answers as before; a new one starts the SUM over from nothing.
    let retry = submit(&ctx, &b, "p03", "m-extra", 5).await.unwrap();
    assert!(retry.replayed);
    let fresh = submit(&ctx, &b, "p03", "m-new", 7).await.unwrap();
    assert_eq!((fresh.score.get(), fresh.previous_score), (7, None));
    project(&ctx.index, &Reporter::default(), ctx.store.stream_batch()).await;
    assert_index_matches_store(&ctx, &b).await;
    // Nothing to remove: not ranked.
    let again = remove::remove_entry(&ctx, &b, &player("nobody"), reason("x"), &op()).await;
    assert!(matches!(again, Err(ServiceError::NotRanked { .. })));
}

#[tokio::test]
async fn an_erasure_resumes_from_its_cursor_and_leaves_nothing_of_the_player() {
    let ctx = ctx();
    let mut boards = Vec::new();
    for i in 0..5 {
        let b = board(&ctx, &format!("mod:erase{i}"), Policy::Best).await;
        populate(&ctx, &b, 3).await;
        boards.push(b);
    }
    remove::remove_entry(&ctx, &boards[1], &player("p01"), reason("cheat"), &op())
        .await
        .unwrap();
    // Out of time at once: nothing done, a cursor to go on from.
    let stopped = erase::erase(
        &ctx,
        &player("p01"),
        reason("gdpr"),
        &op(),
        None,
        Instant::now(),
    )
    .await
    .unwrap();
    assert!(!stopped.sweep.complete);
    assert!(stopped.audit_id.is_none());
    let done = erase::erase(
        &ctx,
        &player("p01"),
        reason("gdpr"),
        &op(),
        stopped.sweep.cursor,
        later(),
    )
    .await
    .unwrap();
    assert!(done.sweep.complete);
    assert_eq!(done.sweep.entries, 5, "four standings and one tombstone");
    for b in &boards {
        let row = ctx
            .store
            .get_row(
                b,
                &player("p01"),
                leaderboard_core::store::Consistency::Strong,
            )
            .await
            .unwrap();
        assert_eq!(row, Default::default(), "no row left on {b}");
        assert_eq!(
            ctx.index
                .keys_of(
                    BoardOrder::new(b, leaderboard_rules::order::Direction::Desc),
                    &[player("p01")]
                )
                .await
                .unwrap()
                .0,
            [None]
        );
        assert_index_matches_store(&ctx, b).await;
    }
    // The removal's audit record no longer names the player; the erasure's never did.
    let page = ctx.store.audit_page(Paging::new(None, 10)).await.unwrap();
    assert_eq!(page.records.len(), 2);
    assert!(page.records.iter().all(|r| r.player_id.is_none()));
    // Idempotent: again, nothing more to erase.
    let again = erase::erase(&ctx, &player("p01"), reason("gdpr"), &op(), None, later())
        .await
        .unwrap();
    assert_eq!((again.sweep.complete, again.sweep.entries), (true, 0));
}

#[tokio::test]
async fn a_ban_outside_any_game_board_changes_nothing_and_a_lift_needs_a_ban() {
    let ctx = ctx();
    let b = board(&ctx, "mod:ban", Policy::Best).await;
    populate(&ctx, &b, 2).await;
    // A standalone board belongs to no game: the ban sweeps no board of it.
    let reply = ban::ban(
        &ctx,
        "g1",
        &player("p00"),
        reason("cheat"),
        &op(),
        None,
        later(),
    )
    .await
    .unwrap();
    assert_eq!((reply.sweep.complete, reply.sweep.entries), (true, 0));
    assert!(
        ctx.store
            .get_ban("g1", &player("p00"))
            .await
            .unwrap()
            .is_some()
    );
    ban::unban(&ctx, "g1", &player("p00"), reason("appeal"), &op())
        .await
        .unwrap();
    let again = ban::unban(&ctx, "g1", &player("p00"), reason("appeal"), &op()).await;
    assert!(matches!(again, Err(ServiceError::NotBanned { .. })));
    let bad = ban::ban(
        &ctx,
        "g#1",
        &player("p00"),
        reason("x"),
        &op(),
        None,
        later(),
    )
    .await;
    assert!(matches!(bad, Err(ServiceError::Domain(_))));
}

#[tokio::test]
async fn a_tournament_change_applies_its_fields_audited_once_and_refuses_what_would_move_a_running_occurrence()
 {
    use leaderboard_core::service::tournaments::{self, TournamentChange};
    use leaderboard_core::store::AuditAction;
    use serde_json::json;
    let ctx = ctx();
    let op = Operator("lia".into());
    let tiers = json!({"tiers": [{"id": "bronze", "promote": {"count": 1}}, {"id": "silver"}]});
    let def = json!({"tournament_id": "lg", "game": "g1", "mode": "race", "title": "League",
        "schedule": {"period": "DAILY"}, "cohort_size": 3, "league": tiers});
    tournaments::create(&ctx, &op, serde_json::from_value(def).unwrap())
        .await
        .unwrap();
    let change = |body: serde_json::Value| serde_json::from_value::<TournamentChange>(body);
    let trail = async || {
        ctx.store
            .audit_page(Paging::new(None, 50))
            .await
            .unwrap()
            .records
    };

    // Title, attempts and the league's zones change; the audit names what changed.
    let promoted_two =
        json!({"tiers": [{"id": "bronze", "promote": {"count": 2}}, {"id": "silver"}]});
    let body = json!({"title": "League two", "max_attempts": 3, "league": promoted_two,
        "reason": "more promotions, ticket 77"});
    let view = tournaments::update(&ctx, &op, "lg", change(body.clone()).unwrap())
        .await
        .unwrap();
    let stored = tournaments::get(&ctx, "lg").await.unwrap().definition;
    assert_eq!(view.definition, stored);
    assert_eq!(
        (stored.title.as_str(), stored.max_attempts),
        ("League two", Some(3))
    );
    assert_eq!(
        serde_json::to_value(&stored.league).unwrap()["tiers"][0]["promote"]["count"],
        2
    );
    let updates = |records: &[leaderboard_core::store::AuditRecord]| {
        (records.iter())
            .filter(|r| r.action == AuditAction::UpdateTournament)
            .map(|r| (r.reason.clone(), r.detail["changed"].clone()))
            .collect::<Vec<_>>()
    };
    let want = vec![(
        "more promotions, ticket 77".to_owned(),
        json!(["title", "max_attempts", "league"]),
    )];
    assert_eq!(updates(&trail().await), want);
    // The same change again writes nothing, and is not audited again.
    tournaments::update(&ctx, &op, "lg", change(body).unwrap())
        .await
        .unwrap();
    assert_eq!(updates(&trail().await), want);

    // Refused, changing nothing: a tier renamed, what is not a change's field, no reason,
    // an unknown tournament.
    let renamed = json!({"tiers": [{"id": "wood"}, {"id": "silver"}], });
    let err = tournaments::update(
        &ctx,
        &op,
        "lg",
        change(json!({"league": renamed, "reason": "r"})).unwrap(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("bronze, silver"), "{err}");
    assert_eq!(err.code(), "not_changeable");
    assert!(change(json!({"cohort_size": 5, "reason": "r"})).is_err());
    let err = tournaments::update(&ctx, &op, "lg", change(json!({"title": "x"})).unwrap())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("reason"), "{err}");
    let err = tournaments::update(
        &ctx,
        &op,
        "nope",
        change(json!({"title": "x", "reason": "r"})).unwrap(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ServiceError::TournamentNotFound(_)), "{err}");
    assert_eq!(
        tournaments::get(&ctx, "lg").await.unwrap().definition,
        stored
    );
    assert_eq!(updates(&trail().await), want);
}
