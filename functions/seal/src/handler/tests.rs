//! The seal handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::edge::testing;
use leaderboard_core::memory::{MemoryEvents, MemoryFiles, MemoryJobQueue, MemoryStore};

use super::*;
use leaderboard::edge::http;
use leaderboard_core::service::seal::reset::ResetSettings;
use leaderboard_core::store::BoardStore;

type MemoryDeps = Deps<MemoryStore, MemoryEvents, MemoryFiles, MemoryJobQueue>;

/// The handler's dependencies over the twins, on `store`.
fn deps(store: MemoryStore) -> MemoryDeps {
    Deps {
        store,
        events: MemoryEvents::default(),
        settings: SealSettings::default(),
        jobs: Jobs {
            files: MemoryFiles::default(),
            queue: MemoryJobQueue::default(),
            exports: Default::default(),
            resets: ResetSettings {
                fence_delay: Duration::ZERO,
                settle: Duration::ZERO,
                redis_retention: Duration::from_secs(3600),
            },
        },
    }
}

#[tokio::test]
async fn seals_on_schedule_and_names_a_board_that_cannot_be_sealed() {
    let deps = deps(MemoryStore::default());
    let scheduled = handle(&deps, testing::event(serde_json::json!({})))
        .await
        .unwrap();
    assert_eq!(scheduled["done"], true);
    assert_eq!(scheduled["boards"], serde_json::json!([]));
    let body = r#"{"leaderboard_id": "no:such:board"}"#;
    let req = http::request("POST /admin/seal", &[], &[], Some(body));
    let resp = handle(&deps, testing::event(serde_json::to_value(req).unwrap()))
        .await
        .unwrap();
    assert_eq!(resp["statusCode"], 404);
    let unknown = serde_json::json!({"board": "x"});
    let err = handle(&deps, testing::event(unknown)).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidPayload");
}

/// `req` through the handler: its status and its body.
async fn call(deps: &MemoryDeps, req: http::Request) -> (Value, Value) {
    let resp = handle(deps, testing::event(serde_json::to_value(req).unwrap()))
        .await
        .unwrap();
    let body = resp["body"].as_str().unwrap_or("null");
    (
        resp["statusCode"].clone(),
        serde_json::from_str::<Value>(body).unwrap(),
    )
}

/// The jobs' queue's `n`th message as the queue delivers it.
fn delivered(deps: &MemoryDeps, n: usize) -> Value {
    let turn = deps.jobs.queue.turns.lock().unwrap()[n].0.clone();
    serde_json::json!({"Records": [{
        "eventSource": "aws:sqs",
        "body": serde_json::to_string(&turn).unwrap(),
    }]})
}

#[tokio::test]
async fn a_reset_is_asked_for_and_run_from_its_queue_and_an_unknown_familys_is_404() {
    let ctx = leaderboard_core::memory::context();
    let best = leaderboard_rules::board::Policy::Best;
    leaderboard_core::memory::seed(&ctx, "rst:h", best, &[("ada", 7), ("bob", 9)]).await;
    let deps = deps(ctx.store);
    let path = [("lb", "rst:h")];
    let ask = |body| http::request("POST /leaderboards/{lb}/reset", &path, &[], Some(body));
    let (status, refused) = call(&deps, ask("{}")).await;
    assert_eq!(
        (status, &refused["error"]["field"]),
        (400.into(), &"reason".into())
    );
    let (status, asked) = call(&deps, ask(r#"{"reason": "exploit"}"#)).await;
    assert_eq!(
        (status, &asked["status"]),
        (202.into(), &"RESETTING".into())
    );
    assert_eq!(asked["archive_id"], "rst:h.reset-1");
    handle(&deps, testing::event(delivered(&deps, 0)))
        .await
        .unwrap();
    let board = deps
        .store
        .get_board(&LeaderboardId::parse("rst:h").unwrap())
        .await;
    assert!(board.unwrap().unwrap().reset.unwrap().done_at.is_some());
    assert_eq!(deps.events.published()[0].total, 2);
    let family = [("game", "nogame"), ("mode", "m")];
    let body = Some(r#"{"reason": "r"}"#);
    let req = http::request("POST /families/{game}/{mode}/reset", &family, &[], body);
    let (status, missing) = call(&deps, req).await;
    assert_eq!(
        (status, &missing["error"]["code"]),
        (404.into(), &"family_not_found".into())
    );
}

#[tokio::test]
async fn an_export_is_asked_for_written_from_its_queue_and_read_with_its_link() {
    let ctx = leaderboard_core::memory::context();
    let best = leaderboard_rules::board::Policy::Best;
    leaderboard_core::memory::seed(&ctx, "exp:h", best, &[("ada", 7), ("bob", 9)]).await;
    let deps = deps(ctx.store);
    let call = async |req| call(&deps, req).await;
    let path = [("lb", "exp:h")];
    let ask = |body| http::request("POST /leaderboards/{lb}/exports", &path, &[], Some(body));
    let (status, refused) = call(ask("{}")).await;
    assert_eq!(
        (status, &refused["error"]["field"]),
        (400.into(), &"reason".into())
    );
    let (status, asked) = call(ask(r#"{"reason": "prizes"}"#)).await;
    assert_eq!((status, &asked["status"]), (202.into(), &"RUNNING".into()));
    let id = asked["export_id"].as_str().unwrap().to_owned();

    // The queue's message runs it.
    handle(&deps, testing::event(delivered(&deps, 0)))
        .await
        .unwrap();
    let one = [("lb", "exp:h"), ("id", id.as_str())];
    let read = http::request("GET /leaderboards/{lb}/exports/{id}", &one, &[], None);
    let (status, done) = call(read).await;
    assert_eq!((status, &done["status"]), (200.into(), &"DONE".into()));
    assert!(done["url"].as_str().unwrap().contains("exports/exp:h/"));
    let list = http::request("GET /leaderboards/{lb}/exports", &path, &[], None);
    let (_, listed) = call(list).await;
    assert_eq!(listed["exports"][0]["export_id"], id.as_str());
    let missing = [("lb", "exp:h"), ("id", "nope")];
    let read = http::request("GET /leaderboards/{lb}/exports/{id}", &missing, &[], None);
    assert_eq!(call(read).await.0, 404);
    let bad = serde_json::json!({"Records": [{"eventSource": "aws:sqs", "body": "{}"}]});
    let err = handle(&deps, testing::event(bad)).await.unwrap_err();
    assert_eq!(err.error_type(), "InvalidPayload");
}
