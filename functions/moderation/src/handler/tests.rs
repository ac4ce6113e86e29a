//! The moderation handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard_core::memory::{self, MemoryIndex, MemoryStore};
use leaderboard_core::store::{AuditAction, ModerationStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::page::Paging;

use super::*;

fn deps() -> Deps<MemoryStore, MemoryIndex> {
    Deps {
        ctx: memory::context(),
        signer: CursorSigner::new("test"),
    }
}

leaderboard::handler_call!(Deps<MemoryStore, MemoryIndex>, query);

#[tokio::test]
async fn removes_an_entry_once_and_audits_it_and_refuses_a_missing_reason() {
    let deps = deps();
    memory::seed(
        &deps.ctx,
        "h:mod",
        Policy::Best,
        &[("a", 30), ("b", 20), ("c", 10)],
    )
    .await;
    let params = [("lb", "h:mod"), ("p", "b")];
    let route = "DELETE /leaderboards/{lb}/players/{p}";
    let (status, body) = call(&deps, route, &params, &[], Some(r#"{}"#)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, body) = call(
        &deps,
        route,
        &params,
        &[],
        Some(r#"{"reason": "cheating"}"#),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["previous_score"], 20);
    assert_eq!(body["previous_rank"], 2);
    let (status, body) = call(&deps, route, &params, &[], Some(r#"{"reason": "again"}"#)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_ranked"))
    );
    let audit = deps
        .ctx
        .store
        .audit_page(Paging::new(None, 10))
        .await
        .unwrap();
    assert_eq!(audit.records.len(), 1);
    let record = &audit.records[0];
    assert_eq!(record.action, AuditAction::RemoveEntry);
    assert_eq!(record.reason, "cheating");
    assert_eq!(record.player_id.as_ref().map(|p| p.as_str()), Some("b"));
}

/// A sweep goes on only from a cursor the service gave for the same sweep: another
/// player's, a ban's, or a bare board key (which would skip every board before it
/// and still answer "complete") is refused with nothing done.
#[tokio::test]
async fn a_sweep_goes_on_only_from_its_own_signed_cursor() {
    let deps = deps();
    memory::seed(&deps.ctx, "h:s1", Policy::Best, &[("a", 3), ("b", 2)]).await;
    memory::seed(&deps.ctx, "h:s2", Policy::Best, &[("a", 5)]).await;
    let erase = "DELETE /players/{p}";
    let reason = Some(r#"{"reason": "asked"}"#);
    let after_s1 = deps.signer.sign("sweep:erase:a", &"##h:s1");
    for (player, cursor) in [
        ("b", after_s1.clone()),
        ("a", "##h:s1".to_owned()),
        ("a", deps.signer.sign("sweep:ban:g:a", &"##h:s1")),
        ("a", String::new()),
    ] {
        let query = [("cursor", cursor.as_str())];
        let (status, body) = call(&deps, erase, &[("p", player)], &query, reason).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("invalid_cursor")),
            "{player} {cursor}"
        );
    }
    let query = [("cursor", after_s1.as_str())];
    let (status, body) = call(&deps, erase, &[("p", "a")], &query, reason).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        (body["boards_scanned"].as_u64(), body["entries"].as_u64()),
        (Some(1), Some(1))
    );
}

#[test]
fn a_stopped_sweep_answers_202_with_its_cursor_signed_for_its_scope() {
    use leaderboard_core::service::moderation::erase::ErasedReply;
    let signer = CursorSigner::new("test");
    let reply = ErasedReply {
        sweep: Sweep {
            cursor: Some("g#m#g:m:GLOBAL:ALL_TIME".into()),
            ..Sweep::default()
        },
        audit_id: None,
    };
    let resp = swept(&signer, "sweep:erase:a", Ok(reply), |r| &mut r.sweep);
    let body = http::response_json(&resp).unwrap_or_default();
    assert_eq!(resp.status_code, 202);
    let cursor = body["cursor"].as_str().unwrap_or_default();
    assert_eq!(
        signer
            .verify::<String>("sweep:erase:a", cursor)
            .ok()
            .as_deref(),
        Some("g#m#g:m:GLOBAL:ALL_TIME")
    );
    assert!(signer.verify::<String>("sweep:erase:b", cursor).is_err());
}
