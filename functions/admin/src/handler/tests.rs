//! The admin handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard_core::memory::{self, MemoryDeadLetters, MemoryIndex, MemoryPlane, MemoryStore};
use leaderboard_core::service::moderation::remove;
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_rules::board::Policy;

use super::*;

type TestDeps = Deps<MemoryStore, MemoryIndex, MemoryPlane, MemoryDeadLetters>;

/// The admin function's dependencies over the stores of `ctx` (a [`memory::context`]).
fn over(
    ctx: leaderboard_core::service::Context<MemoryStore, MemoryIndex>,
    plane: Option<MemoryPlane>,
    dead_letters: Option<MemoryDeadLetters>,
) -> TestDeps {
    Deps {
        store: ctx.store,
        index: ctx.index,
        plane,
        dead_letters,
    }
}

fn deps(plane: MemoryPlane, dead_letters: Option<MemoryDeadLetters>) -> TestDeps {
    over(memory::context(), Some(plane), dead_letters)
}

leaderboard::handler_call!(TestDeps, query);

#[tokio::test]
async fn the_index_view_answers_what_it_can_read_and_names_the_rest() {
    for (plane, group_read) in [
        (MemoryPlane::even("rg", 3), true),
        (MemoryPlane(None), false),
    ] {
        let ctx = memory::context();
        memory::seed(&ctx, "h:idx", Policy::Best, &[("a", 1)]).await;
        let deps = over(ctx, Some(plane), None);
        let view = async |q: &str| {
            call(
                &deps,
                "GET /admin/index",
                &[],
                &[("leaderboard_id", q)],
                None,
            )
            .await
        };
        let (status, body) = view("h:idx").await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(body["board"]["health"], "ready");
        assert_eq!(
            body["board"]["slot"],
            LeaderboardId::parse("h:idx").unwrap().cluster_slot()
        );
        assert_eq!(body["replication_group"].is_object(), group_read, "{body}");
        assert_eq!(
            body["board"]["node_group_id"].is_string(),
            group_read,
            "{body}"
        );
        // The twin offers no events: said, not an error.
        let said = body["unavailable"].to_string();
        assert!(said.contains("DescribeEvents"), "{said}");
        assert_eq!(
            said.contains("DescribeReplicationGroups"),
            !group_read,
            "{said}"
        );
        assert_eq!(view("h:none").await.0, 404);
        assert_eq!(view("bad id").await.0, 400);
    }
}

#[tokio::test]
async fn mappings_are_checked_stored_and_read_back_by_version() {
    let deps = deps(MemoryPlane(None), None);
    let source = [("source", "pod-1")];
    let body = r#"{"fields": {"player_id": "/p", "match_id": "/m", "score": "/s",
        "game": {"const": "g"}, "mode": {"const": "m"}, "region": {"const": "NA"}}}"#;
    let route = "PUT /admin/mappings/{source}";
    let (status, checked) = call(&deps, route, &source, &[("dry_run", "true")], Some(body)).await;
    assert_eq!(status, 200, "{checked}");
    let get = "GET /admin/mappings/{source}";
    assert_eq!(
        call(&deps, get, &source, &[], None).await.0,
        404,
        "a dry run stores nothing"
    );
    let (status, stored) = call(&deps, route, &source, &[], Some(body)).await;
    assert_eq!(status, 201, "{stored}");
    assert_eq!(
        call(&deps, route, &source, &[], Some(body)).await.0,
        200,
        "the same again"
    );
    let (status, read) = call(&deps, get, &source, &[("version", "1")], None).await;
    assert_eq!((status, &read), (200, &stored));
    let (status, bad) = call(&deps, route, &source, &[("dry_run", "yes")], Some(body)).await;
    assert_eq!(
        (status, bad["error"]["field"].as_str()),
        (400, Some("dry_run"))
    );
}

#[tokio::test]
async fn dead_letters_are_counted_where_the_deployment_has_a_queue() {
    let with = deps(MemoryPlane(None), Some(MemoryDeadLetters::default()));
    let (status, count) = call(&with, "GET /admin/dead-letters", &[], &[], None).await;
    assert_eq!(status, 200, "{count}");
    let without = deps(MemoryPlane(None), None);
    let (status, refused) = call(&without, "GET /admin/dead-letters", &[], &[], None).await;
    assert_eq!(
        (status, refused["error"]["field"].as_str()),
        (400, Some("dead_letters"))
    );
}

#[tokio::test]
async fn the_audit_trail_pages_newest_first() {
    let ctx = memory::context();
    memory::seed(
        &ctx,
        "h:audit",
        Policy::Best,
        &[("a", 3), ("b", 2), ("c", 1)],
    )
    .await;
    let lb = LeaderboardId::parse("h:audit").unwrap();
    for p in ["a", "b", "c"] {
        let player = leaderboard_rules::ids::PlayerId::parse(p).unwrap();
        let body = ReasonBody {
            reason: Some(format!("cheating {p}").into()),
        };
        let reason = Reason::parse(body).unwrap();
        remove::remove_entry(&ctx, &lb, &player, reason, &Operator("op".into()))
            .await
            .unwrap();
        // Records order by their millisecond: one apart, so "newest first" is defined.
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
    let deps = over(ctx, None, None);
    let (status, first) = call(&deps, "GET /admin/audit", &[], &[("limit", "2")], None).await;
    assert_eq!(status, 200, "{first}");
    let reasons = |page: &serde_json::Value| -> Vec<String> {
        let records = page["records"].as_array().unwrap();
        records
            .iter()
            .map(|r| r["reason"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(reasons(&first), ["cheating c", "cheating b"]);
    let cursor = first["next_cursor"].as_str().expect("a next page");
    let (_, second) = call(&deps, "GET /admin/audit", &[], &[("cursor", cursor)], None).await;
    assert_eq!(reasons(&second), ["cheating a"]);
    let (status, bad) = call(&deps, "GET /admin/audit", &[], &[("limit", "0")], None).await;
    assert_eq!(
        (status, bad["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
}
