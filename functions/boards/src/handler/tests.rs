//! The boards handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard::memory::{self, MemoryDeadLetters, MemoryIndex, MemoryPlane, MemoryStore};

use super::*;

#[tokio::test]
async fn creates_once_reads_and_refuses_a_transition_out_of_closed() {
    let deps = Deps {
        store: MemoryStore::default(),
        index: MemoryIndex::default(),
        signer: CursorSigner::new("test"),
        plane: None::<MemoryPlane>,
        dead_letters: None::<MemoryDeadLetters>,
    };
    let call = |route: &'static str, body: Option<&'static str>| {
        let req = http::request(route, &[("lb", "h:boards")], &[], body);
        handle(&deps, memory::event(req))
    };
    let create = Some(r#"{"leaderboard_id": "h:boards", "policy": "SUM"}"#);
    assert_eq!(
        call("POST /leaderboards", create)
            .await
            .unwrap()
            .status_code,
        201
    );
    assert_eq!(
        call("POST /leaderboards", create)
            .await
            .unwrap()
            .status_code,
        200
    );
    let other = Some(r#"{"leaderboard_id": "h:boards", "policy": "MIN"}"#);
    assert_eq!(
        call("POST /leaderboards", other).await.unwrap().status_code,
        409
    );
    let got = call("GET /leaderboards/{lb}", None).await.unwrap();
    assert_eq!(http::response_json(&got).unwrap()["policy"], "SUM");
    let close = Some(r#"{"status": "CLOSED"}"#);
    assert_eq!(
        call("PATCH /leaderboards/{lb}", close)
            .await
            .unwrap()
            .status_code,
        200
    );
    let reopen = call("PATCH /leaderboards/{lb}", Some(r#"{"status": "ACTIVE"}"#))
        .await
        .unwrap();
    assert_eq!(reopen.status_code, 409);
    let list = call("GET /leaderboards", None).await.unwrap();
    assert_eq!(
        http::response_json(&list).unwrap()["boards"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[tokio::test]
async fn the_index_view_answers_what_it_can_read_and_names_the_rest() {
    let index = |plane: MemoryPlane| Deps {
        store: MemoryStore::default(),
        index: MemoryIndex::default(),
        signer: CursorSigner::new("test"),
        plane: Some(plane),
        dead_letters: Some(MemoryDeadLetters::default()),
    };
    for (deps, group_read) in [
        (index(MemoryPlane::even("rg", 3)), true),
        (index(MemoryPlane(None)), false),
    ] {
        let create = http::request(
            "POST /leaderboards",
            &[],
            &[],
            Some(r#"{"leaderboard_id": "h:idx"}"#),
        );
        handle(&deps, memory::event(create)).await.unwrap();
        let view = |q: &'static str| {
            let req = http::request("GET /admin/index", &[], &[("leaderboard_id", q)], None);
            handle(&deps, memory::event(req))
        };
        let got = view("h:idx").await.unwrap();
        let body = http::response_json(&got).unwrap();
        assert_eq!(got.status_code, 200, "{body}");
        assert_eq!(body["board"]["health"], "ready");
        assert_eq!(
            body["board"]["slot"],
            leaderboard::redis::board_slot(&LeaderboardId::parse("h:idx").unwrap())
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
        assert_eq!(view("h:none").await.unwrap().status_code, 404);
        assert_eq!(view("bad id").await.unwrap().status_code, 400);
    }
}
