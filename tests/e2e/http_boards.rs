//! Board management and the fan-out over HTTP: families, the board list, status
//! transitions and refused writes, pages, and a server time zone that must not leak.

use anyhow::{Context as _, Result};
use chrono::{Datelike, Utc};
use serde_json::{Value, json};

use crate::support::{Stack, ranks, redis_url, unique};

fn family_body(game: &str) -> Value {
    json!({
        "game": game, "mode": "ranked", "policy": "BEST",
        "regions": ["NA", "EU"],
        "periods": ["ALL_TIME", "SEASON", "MONTHLY", "WEEKLY", "DAILY"],
        "season": {"id": "s1", "start": "2020-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"},
        // Two days of grace keep yesterday's windows open for this test.
        "grace_seconds": 172_800
    })
}

fn game_name() -> String {
    let u = unique("g");
    u[u.len().saturating_sub(30)..].to_owned()
}

#[tokio::test]
async fn families_fan_out_and_the_board_list_over_http_in_a_foreign_time_zone() -> Result<()> {
    // UTC+14: 11:00Z on the 22nd is already the 23rd there. Windows must stay UTC.
    let stack = Stack::start_with(&redis_url(), &[("TZ", "Pacific/Kiritimati")]).await?;
    let game = game_name();
    let (status, fam) = stack.post("/families", family_body(&game)).await?;
    assert_eq!(status, 201, "{fam}");
    let (status, _) = stack.post("/families", family_body(&game)).await?;
    assert_eq!(status, 200, "the same settings again");
    let mut other = family_body(&game);
    other["policy"] = json!("MIN");
    let (status, body) = stack.post("/families", other).await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("family_conflict"))
    );

    // Yesterday 23:00 UTC: already today in UTC+14, so a leaking zone would pick
    // today's windows.
    let today = Utc::now().date_naive();
    let played = (today - chrono::Days::new(1))
        .and_hms_opt(23, 0, 0)
        .unwrap()
        .and_utc();
    let day = played.format("%Y-%m-%d").to_string();
    let iso = played.iso_week();
    let week = format!("{}-W{:02}", iso.year(), iso.week());
    let month = played.format("%Y-%m").to_string();
    let result = |player: &str, m: &str, score: i64| {
        json!({"game": game, "mode": "ranked", "region": "EU", "player_id": player,
               "match_id": m, "score": score, "event_ts": played.to_rfc3339()})
    };
    let (status, reply) = stack.post("/scores", result("p1", "m1", 70)).await?;
    assert_eq!(status, 200, "{reply}");
    let results = reply["results"].as_array().cloned().unwrap_or_default();
    assert_eq!(results.len(), 10);
    assert!(
        results.iter().all(|r| r["update_applied"] == true),
        "{reply}"
    );
    let ids: Vec<&str> = results
        .iter()
        .filter_map(|r| r["leaderboard_id"].as_str())
        .collect();
    for id in [
        format!("{game}:ranked:EU:DAILY:{day}"),
        format!("{game}:ranked:GLOBAL:WEEKLY:{week}"),
        format!("{game}:ranked:GLOBAL:MONTHLY:{month}"),
    ] {
        assert!(ids.contains(&id.as_str()), "{id} not in {ids:?}");
    }
    assert!(
        ids.contains(&format!("{game}:ranked:EU:SEASON:s1").as_str()),
        "{ids:?}"
    );
    assert!(
        ids.contains(&format!("{game}:ranked:GLOBAL:ALL_TIME").as_str()),
        "{ids:?}"
    );
    let (status, retry) = stack.post("/scores", result("p1", "m1", 70)).await?;
    assert_eq!(status, 200);
    let outcome = |v: &Value| {
        v["results"]
            .as_array()
            .map(|rs| {
                rs.iter()
                    .map(|r| {
                        (
                            r["leaderboard_id"].clone(),
                            r["score"].clone(),
                            r["update_applied"].clone(),
                            r["refused"]["code"].clone(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(
        outcome(&retry),
        outcome(&reply),
        "a retry answers the same list"
    );

    // The family knows its current windows; the list shows the boards the write made.
    let (status, fam) = stack.get(&format!("/families/{game}/ranked")).await?;
    assert_eq!(status, 200);
    assert_eq!(
        fam["current"]["GLOBAL"]["ALL_TIME"],
        json!(format!("{game}:ranked:GLOBAL:ALL_TIME"))
    );
    let mut listed = stack
        .walk(
            &format!("/leaderboards?game={game}&mode=ranked&limit=3"),
            "boards",
            "leaderboard_id",
        )
        .await?;
    listed.sort();
    let mut expected: Vec<String> = results
        .iter()
        .filter(|r| r["refused"].is_null())
        .filter_map(|r| r["leaderboard_id"].as_str().map(str::to_owned))
        .collect();
    expected.sort();
    assert_eq!(listed, expected);
    // A cursor is bound to the filters it was read with, and `mode` needs `game`.
    let (_, first) = stack
        .get(&format!("/leaderboards?game={game}&mode=ranked&limit=1"))
        .await?;
    let cursor = first["next_cursor"].as_str().unwrap_or_default().to_owned();
    for (query, code) in [
        (format!("game={game}&cursor=not-a-cursor"), "invalid_cursor"),
        (format!("game={game}&cursor={cursor}"), "invalid_cursor"),
        (format!("game={game}&mode=ranked&cursor="), "invalid_cursor"),
        ("mode=ranked".to_owned(), "invalid_request"),
    ] {
        let (status, body) = stack.get(&format!("/leaderboards?{query}")).await?;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some(code)),
            "{query}: {body}"
        );
    }
    let (status, _) = stack
        .get(&format!(
            "/leaderboards?game={game}&mode=ranked&cursor={cursor}"
        ))
        .await?;
    assert_eq!(status, 200, "the cursor with its own filters");
    Ok(())
}

#[tokio::test]
async fn status_transitions_and_the_writes_they_refuse() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("st");
    let (status, _) = stack
        .post("/leaderboards", json!({"leaderboard_id": lb}))
        .await?;
    assert_eq!(status, 201);
    let score = |m: &str| {
        let (stack, lb) = (&stack, &lb);
        let m = m.to_owned();
        async move {
            stack
                .post(
                    &format!("/leaderboards/{lb}/players/p1/score"),
                    json!({"new_score": 5, "match_id": m}),
                )
                .await
        }
    };
    assert_eq!(score("m1").await?.0, 200);
    let patch = |to: &str| {
        let (stack, lb) = (&stack, &lb);
        let to = to.to_owned();
        async move {
            stack
                .patch(&format!("/leaderboards/{lb}"), json!({"status": to}))
                .await
        }
    };
    let (status, body) = patch("FROZEN").await?;
    assert_eq!((status, body["status"].as_str()), (200, Some("FROZEN")));
    // The functions cache definitions for up to BOARD_CACHE_TTL_MS (1 s).
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let (status, body) = score("m2").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("board_not_active"))
    );
    // A retry of a match accepted before the freeze still gets its receipt.
    let (status, body) = score("m1").await?;
    assert_eq!((status, body["replayed"].as_bool()), (200, Some(true)));
    // Frozen boards still serve reads.
    let (status, top) = stack.get(&format!("/leaderboards/{lb}/top")).await?;
    assert_eq!((status, top["total"].as_u64()), (200, Some(1)));

    assert_eq!(patch("ACTIVE").await?.0, 200);
    assert_eq!(patch("CLOSED").await?.1["status"], "CLOSED");
    let (status, body) = patch("ACTIVE").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("invalid_transition"))
    );
    let (status, body) = patch("OPEN").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    // A wrong enum value names its field and the values it takes.
    assert_eq!(body["error"]["field"], "status", "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("ACTIVE") && message.contains("FROZEN"),
        "{message}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    let (status, body) = score("m3").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("board_not_active"))
    );
    let (status, rank) = stack
        .get(&format!("/leaderboards/{lb}/players/p1/rank"))
        .await?;
    assert_eq!((status, rank["score"].as_i64()), (200, Some(5)));
    let (status, board) = stack.get(&format!("/leaderboards/{lb}")).await?;
    assert_eq!((status, board["status"].as_str()), (200, Some("CLOSED")));
    let (status, body) = stack
        .patch("/leaderboards/nope-nope", json!({"status": "FROZEN"}))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("board_not_found"))
    );
    Ok(())
}

#[tokio::test]
async fn ranks_pages_over_http_and_future_results_are_refused() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("pg");
    stack
        .post("/leaderboards", json!({"leaderboard_id": lb}))
        .await?;
    for i in 0..12 {
        let (status, _) = stack
            .post(
                &format!("/leaderboards/{lb}/players/p{i:02}/score"),
                json!({"new_score": i, "match_id": "m"}),
            )
            .await?;
        assert_eq!(status, 200);
    }
    let players = stack
        .walk(
            &format!("/leaderboards/{lb}/ranks?limit=5"),
            "entries",
            "player_id",
        )
        .await?;
    let expected: Vec<String> = (0..12).rev().map(|i| format!("p{i:02}")).collect();
    assert_eq!(players, expected);
    let (status, body) = stack
        .get(&format!("/leaderboards/{lb}/ranks?limit=0"))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );

    let (status, body) = stack
        .post(
            &format!("/leaderboards/{lb}/players/p00/score"),
            json!({"new_score": 99, "match_id": "future", "event_ts": "2099-01-01T00:00:00Z"}),
        )
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (422, Some("event_ts_in_future"))
    );
    Ok(())
}

/// A board (or a family's boards) created with `dense_ranks: false`: the setting shows
/// and is part of the board's identity, every read answers unique and competition
/// places as any board does, and `rank_mode=dense` is a 422 on every ranked read (the
/// index keeps no distinct scores to count it from), with nothing changed.
#[tokio::test]
async fn boards_without_dense_ranks_refuse_them_on_every_read_and_serve_the_rest() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("plain");
    let create = |dense: Value| json!({"leaderboard_id": lb, "dense_ranks": dense});
    let (status, body) = stack.post("/leaderboards", create(json!(false))).await?;
    assert_eq!(
        (status, &body["dense_ranks"]),
        (201, &json!(false)),
        "{body}"
    );
    let (status, _) = stack.post("/leaderboards", create(json!(false))).await?;
    assert_eq!(status, 200, "the same settings again");
    for (dense, want) in [
        (json!(true), (409, "board_conflict")),
        (json!("no"), (400, "invalid_request")),
    ] {
        let (status, body) = stack.post("/leaderboards", create(dense)).await?;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (want.0, Some(want.1))
        );
    }
    let (status, shown) = stack.get(&format!("/leaderboards/{lb}")).await?;
    assert_eq!(
        (status, &shown["dense_ranks"]),
        (200, &json!(false)),
        "{shown}"
    );
    // Off unless asked, for boards and families alike.
    let (_, default) = stack
        .post("/leaderboards", json!({"leaderboard_id": unique("dense")}))
        .await?;
    assert_eq!(default["dense_ranks"], json!(false), "{default}");
    let mut plain_family = family_body(&game_name());
    plain_family
        .as_object_mut()
        .map(|f| f.remove("dense_ranks"));
    let (_, fam) = stack.post("/families", plain_family).await?;
    assert_eq!(fam["dense_ranks"], json!(false), "{fam}");

    for (p, s) in [("a", 50), ("b", 50), ("c", 40)] {
        stack.post_score(&lb, p, "m1", s).await?;
    }
    stack.set_friends("c", &["a", "b"]).await?;
    let reads = |mode: &str| {
        [
            format!("/leaderboards/{lb}/top?rank_mode={mode}"),
            format!("/leaderboards/{lb}/ranks?rank_mode={mode}"),
            format!("/leaderboards/{lb}/players/c/rank?rank_mode={mode}"),
            format!("/leaderboards/{lb}/players/c/friends-rank?rank_mode={mode}"),
        ]
    };
    for path in reads("dense") {
        let (status, body) = stack.get(&path).await?;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (422, Some("dense_ranks_not_kept")),
            "{path}: {body}"
        );
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("dense_ranks"), "{path}: {body}");
    }
    let [top, page, rank, friends] = reads("competition");
    let (_, top) = stack.get(&top).await?;
    assert_eq!(ranks(&top, "entries"), [1, 1, 3], "{top}");
    let (_, page) = stack.get(&page).await?;
    assert_eq!(ranks(&page, "entries"), [1, 1, 3], "{page}");
    let (_, rank) = stack.get(&rank).await?;
    assert_eq!(rank["global_rank"].as_u64(), Some(3), "{rank}");
    let (_, friends) = stack.get(&friends).await?;
    assert_eq!(friends["friends_rank"].as_u64(), Some(3), "{friends}");

    // A family's setting goes to every board its results create.
    let game = game_name();
    let mut family = family_body(&game);
    family["dense_ranks"] = json!(false);
    let (status, fam) = stack.post("/families", family.clone()).await?;
    assert_eq!((status, &fam["dense_ranks"]), (201, &json!(false)), "{fam}");
    family["dense_ranks"] = json!(true);
    let (status, _) = stack.post("/families", family).await?;
    assert_eq!(status, 409, "another dense_ranks is another family");
    let result = json!({"game": game, "mode": "ranked", "region": "EU", "player_id": "p1",
                        "match_id": "m1", "score": 7});
    let (status, reply) = stack.post("/scores", result).await?;
    assert_eq!(status, 200, "{reply}");
    let all_time = format!("{game}:ranked:GLOBAL:ALL_TIME");
    let (_, board) = stack.get(&format!("/leaderboards/{all_time}")).await?;
    assert_eq!(board["dense_ranks"], json!(false), "{board}");
    let (status, _) = stack
        .get(&format!(
            "/leaderboards/{all_time}/players/p1/rank?rank_mode=dense"
        ))
        .await?;
    assert_eq!(status, 422);
    let (status, unique_rank) = stack
        .get(&format!("/leaderboards/{all_time}/players/p1/rank"))
        .await?;
    assert_eq!(
        (status, unique_rank["global_rank"].as_u64()),
        (200, Some(1))
    );
    Ok(())
}

/// Which boards keep a rank order in DynamoDB, as the API shows and takes it: boards
/// keep it unless asked, a family keeps it on every period but DAILY unless it names
/// its own, a period the family does not have is refused, and the setting is part of
/// the board's and the family's identity.
#[tokio::test]
async fn a_rank_order_in_dynamodb_is_kept_unless_asked_and_a_familys_daily_boards_go_without()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("order");
    let (status, board) = stack
        .post("/leaderboards", json!({"leaderboard_id": lb}))
        .await?;
    assert_eq!(
        (status, &board["rank_index"]),
        (201, &json!(true)),
        "{board}"
    );
    let (status, body) = stack
        .post(
            "/leaderboards",
            json!({"leaderboard_id": lb, "rank_index": false}),
        )
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("board_conflict"))
    );
    let lean = unique("lean");
    let (status, board) = stack
        .post(
            "/leaderboards",
            json!({"leaderboard_id": lean, "rank_index": false}),
        )
        .await?;
    assert_eq!(
        (status, &board["rank_index"]),
        (201, &json!(false)),
        "{board}"
    );

    let game = game_name();
    let (status, fam) = stack.post("/families", family_body(&game)).await?;
    assert_eq!(status, 201, "{fam}");
    assert_eq!(
        fam["rank_index_periods"],
        json!(["ALL_TIME", "SEASON", "MONTHLY", "WEEKLY"]),
        "{fam}"
    );
    let result = json!({"game": game, "mode": "ranked", "region": "EU", "player_id": "p1",
                        "match_id": "m1", "score": 7});
    let (status, reply) = stack.post("/scores", result).await?;
    assert_eq!(status, 200, "{reply}");
    for r in reply["results"].as_array().context("results")? {
        let id = r["leaderboard_id"].as_str().context("board id")?;
        let (_, board) = stack.get(&format!("/leaderboards/{id}")).await?;
        let daily = r["period"] == "DAILY";
        assert_eq!(board["rank_index"], json!(!daily), "{board}");
        // Read live from Redis, every board answers alike.
        let (status, rank) = stack
            .get(&format!("/leaderboards/{id}/players/p1/rank"))
            .await?;
        assert_eq!(
            (status, rank["global_rank"].as_u64()),
            (200, Some(1)),
            "{id}"
        );
    }

    let mut named = family_body(&game_name());
    named["rank_index_periods"] = json!(["DAILY", "ALL_TIME"]);
    let (status, fam) = stack.post("/families", named.clone()).await?;
    assert_eq!(status, 201, "{fam}");
    assert_eq!(
        fam["rank_index_periods"],
        json!(["ALL_TIME", "DAILY"]),
        "{fam}"
    );
    named["rank_index_periods"] = json!([]);
    let (status, _) = stack.post("/families", named).await?;
    assert_eq!(status, 409, "another rank_index_periods is another family");
    let mut foreign = family_body(&game_name());
    foreign["periods"] = json!(["ALL_TIME"]);
    foreign["rank_index_periods"] = json!(["WEEKLY"]);
    let (status, body) = stack.post("/families", foreign).await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request")),
        "{body}"
    );
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("rank_index_periods")),
        "{body}"
    );
    Ok(())
}
