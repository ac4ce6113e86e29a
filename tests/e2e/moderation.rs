//! Moderation over HTTP on the local stack: removals re-rank everyone and survive a
//! replayed stream, bans refuse results across a game's boards, erasure leaves nothing
//! of the player in the table or the index, and every action is in the audit trail.

use std::time::Duration;

use anyhow::Result;
use leaderboard_core::service::projector::project;
use leaderboard_core::service::repair::Reporter;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, batch, dynamodb_url, eventually, players, redis_url, unique};

fn reason(text: &str) -> Option<Value> {
    Some(json!({ "reason": text }))
}

/// The board's top 100 once every read agrees with `want` (the write-through and the
/// stream are both done).
async fn top_is(stack: &Stack, lb: &str, want: &[&str]) -> Result<Value> {
    eventually(Duration::from_secs(10), "the top", || async {
        let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=100")).await?;
        anyhow::ensure!(status == 200, "{top}");
        Ok((players(&top, "entries") == want).then_some(top))
    })
    .await
}

#[tokio::test]
async fn a_removal_reranks_everyone_survives_a_replayed_stream_and_a_new_result_starts_over()
-> Result<()> {
    let (stack, lb) = Stack::with_board("mod").await?;
    let scores = [
        ("p1", 80),
        ("p2", 70),
        ("p3", 60),
        ("p4", 50),
        ("p5", 40),
        ("p6", 30),
    ];
    for (p, s) in scores {
        stack.post_score(&lb, p, "m1", s).await?;
    }
    let path = format!("/leaderboards/{lb}/players/p3");
    // Bad input changes nothing.
    let (status, body) = stack.call(Method::DELETE, &path, Some(json!({}))).await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, body) = stack
        .call(Method::DELETE, &path, reason(&"x".repeat(501)))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    let (status, body) = stack
        .call(
            Method::DELETE,
            "/leaderboards/nope-nope/players/p3",
            reason("cheat"),
        )
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("board_not_found"))
    );

    let (status, removed) = stack.call(Method::DELETE, &path, reason("aimbot")).await?;
    assert_eq!(status, 200, "{removed}");
    assert_eq!(
        (
            removed["previous_score"].as_i64(),
            removed["previous_rank"].as_u64()
        ),
        (Some(60), Some(3))
    );
    let (status, body) = stack.call(Method::DELETE, &path, reason("again")).await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_ranked"))
    );

    // Everyone below moved up: the model is the board without p3.
    let model = ["p1", "p2", "p4", "p5", "p6"];
    let top = top_is(&stack, &lb, &model).await?;
    assert_eq!(top["total"], 5);
    for (i, p) in model.iter().enumerate() {
        let (status, rank) = stack
            .get(&format!("/leaderboards/{lb}/players/{p}/rank"))
            .await?;
        assert_eq!(
            (status, rank["global_rank"].as_u64()),
            (200, Some(i as u64 + 1)),
            "{p}: {rank}"
        );
    }
    let (status, _) = stack.get(&format!("{path}/rank")).await?;
    assert_eq!(status, 404);

    // The whole stream delivered again (as after a retried batch or a repair): p3 stays
    // out, and the index still equals the table.
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let board = leaderboard_rules::ids::LeaderboardId::parse(&lb)?;
    eventually(Duration::from_secs(10), "the projector", || async {
        Ok(env.index_vs_store(&board).await.ok())
    })
    .await?;
    let records = env.stream_records().await;
    assert!(
        records.iter().any(|r| r.event_name == "MODIFY"),
        "the removal is on the stream"
    );
    // First only the records of standings (as if those of p3's old score came late,
    // after the removal), then all of them, in order.
    let standings: Vec<_> = records
        .iter()
        .filter(|r| {
            r.change.new_image.get("kind")
                == Some(&serde_dynamo::AttributeValue::S("standing".into()))
        })
        .cloned()
        .collect();
    assert!(standings.len() >= 6, "every standing's record is there");
    let (retry, stats) = project(&env.ctx.index, &Reporter::default(), batch(standings)).await;
    assert!(retry.is_empty());
    assert_eq!(stats.applied, 0, "nothing older applies: {stats:?}");
    assert_eq!(env.assert_index_matches_store(&board).await, 5);
    project(&env.ctx.index, &Reporter::default(), batch(records)).await;
    assert_eq!(env.assert_index_matches_store(&board).await, 5);
    top_is(&stack, &lb, &model).await?;

    // A retried match answers as it did; a new match starts p3 over, below where they were.
    let (status, retry) = stack
        .post(
            &format!("{path}/score"),
            json!({"new_score": 60, "match_id": "m1"}),
        )
        .await?;
    assert_eq!(
        (status, retry["replayed"].as_bool()),
        (200, Some(true)),
        "{retry}"
    );
    let fresh = stack.post_score(&lb, "p3", "m2", 35).await?;
    assert_eq!(
        (fresh["score"].as_i64(), fresh["previous_score"].as_i64()),
        (Some(35), None)
    );
    assert_eq!(fresh["rank"], 5);
    top_is(&stack, &lb, &["p1", "p2", "p4", "p5", "p3", "p6"]).await?;

    // Audited, with who and why.
    let (status, audit) = stack.get("/admin/audit?limit=10").await?;
    assert_eq!(status, 200, "{audit}");
    let record = &audit["records"][0];
    assert_eq!(
        (
            record["action"].as_str(),
            record["player_id"].as_str(),
            record["reason"].as_str()
        ),
        (Some("remove_entry"), Some("p3"), Some("aimbot"))
    );
    assert_eq!(
        record["actor"],
        "arn:aws:iam::000000000000:user/local-operator"
    );
    assert_eq!(record["leaderboard_id"].as_str(), Some(lb.as_str()));
    Ok(())
}

fn game_name() -> String {
    let u = unique("g");
    u[u.len().saturating_sub(30)..].to_owned()
}

#[tokio::test]
async fn a_ban_empties_every_board_of_the_game_refuses_results_and_can_be_lifted() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let (game, other) = (game_name(), game_name());
    for g in [&game, &other] {
        let family = json!({"game": g, "mode": "ranked", "policy": "SUM", "regions": ["NA"],
                            "periods": ["ALL_TIME", "DAILY"]});
        let (status, body) = stack.post("/families", family).await?;
        assert_eq!(status, 201, "{body}");
    }
    let result = |g: &str, p: &str, m: &str, score: i64| json!({"game": g, "mode": "ranked", "region": "NA", "player_id": p, "match_id": m, "score": score});
    let mut boards = Vec::new();
    for (p, s) in [("a", 10), ("cheater", 99), ("c", 5)] {
        let (status, reply) = stack.post("/scores", result(&game, p, "m1", s)).await?;
        assert_eq!(status, 200, "{reply}");
        boards = reply["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["leaderboard_id"].as_str().unwrap().to_owned())
            .collect();
    }
    assert_eq!(boards.len(), 4, "GLOBAL and NA, all-time and daily");
    let (status, _) = stack
        .post("/scores", result(&other, "cheater", "m1", 1))
        .await?;
    assert_eq!(status, 200);

    let ban_path = format!("/games/{game}/bans/cheater");
    stack
        .call(Method::PUT, &ban_path, None)
        .await
        .map(|(s, _)| assert_eq!(s, 400))?;
    let (status, ban) = stack
        .call(Method::PUT, &ban_path, reason("wallhack"))
        .await?;
    assert_eq!(status, 200, "{ban}");
    assert_eq!(
        (ban["complete"].as_bool(), ban["entries"].as_u64()),
        (Some(true), Some(4))
    );
    for lb in &boards {
        top_is(&stack, lb, &["a", "c"]).await?;
    }
    // Refused on every path into the game; another game is not touched.
    let (status, body) = stack
        .post("/scores", result(&game, "cheater", "m2", 5))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("player_banned")),
        "{body}"
    );
    let (status, body) = stack
        .post(
            &format!("/leaderboards/{}/players/cheater/score", boards[0]),
            json!({"new_score": 5, "match_id": "m3"}),
        )
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("player_banned")),
        "{body}"
    );
    let other_board = format!("{other}:ranked:GLOBAL:ALL_TIME");
    top_is(&stack, &other_board, &["cheater"]).await?;

    // Lifted: results count again, from nothing (the removed standings stay removed).
    let (status, body) = stack
        .call(Method::DELETE, &ban_path, reason("appeal won"))
        .await?;
    assert_eq!(
        (status, body["banned"].as_bool()),
        (200, Some(false)),
        "{body}"
    );
    let (status, body) = stack
        .call(Method::DELETE, &ban_path, reason("again"))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_banned"))
    );
    let (status, reply) = stack
        .post("/scores", result(&game, "cheater", "m4", 7))
        .await?;
    assert_eq!(status, 200, "{reply}");
    for r in reply["results"].as_array().unwrap() {
        assert_eq!(r["score"], 7, "SUM starts over: {r}");
    }
    top_is(&stack, &boards[0], &["a", "cheater", "c"]).await?;
    let (_, audit) = stack.get("/admin/audit").await?;
    let actions: Vec<&str> = audit["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["action"].as_str())
        .collect();
    assert_eq!(actions[..2], ["unban", "ban"]);
    Ok(())
}

#[tokio::test]
async fn erasure_leaves_no_item_or_key_of_the_player_anywhere() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let who = unique("erase");
    let mut boards = Vec::new();
    for tag in ["era", "erb", "erc"] {
        let lb = stack.create_board(tag).await?;
        stack.post_score(&lb, &who, "m1", 50).await?;
        stack.post_score(&lb, &who, "m2", 60).await?;
        stack.post_score(&lb, "bystander", "m1", 40).await?;
        boards.push(lb);
    }
    // A removed standing (a tombstone, and an audit record that names the player), a
    // closed board, a ban.
    let (status, _) = stack
        .call(
            Method::DELETE,
            &format!("/leaderboards/{}/players/{who}", boards[0]),
            reason("cheat"),
        )
        .await?;
    assert_eq!(status, 200);
    let (status, _) = stack
        .patch(
            &format!("/leaderboards/{}", boards[1]),
            json!({"status": "CLOSED"}),
        )
        .await?;
    assert_eq!(status, 200);
    let (status, _) = stack
        .call(
            Method::PUT,
            &format!("/games/g-erase/bans/{who}"),
            reason("cheat"),
        )
        .await?;
    assert_eq!(status, 200);

    let (status, erased) = stack
        .call(
            Method::DELETE,
            &format!("/players/{who}"),
            reason("GDPR request 42"),
        )
        .await?;
    assert_eq!(status, 200, "{erased}");
    assert_eq!(
        (erased["complete"].as_bool(), erased["entries"].as_u64()),
        (Some(true), Some(3))
    );
    // Idempotent.
    let (status, again) = stack
        .call(
            Method::DELETE,
            &format!("/players/{who}"),
            reason("GDPR request 42"),
        )
        .await?;
    assert_eq!(
        (status, again["entries"].as_u64()),
        (200, Some(0)),
        "{again}"
    );

    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    // The stream's REMOVE records reach the projector too; wait for it to be done, then
    // look everywhere.
    for lb in &boards {
        let board = leaderboard_rules::ids::LeaderboardId::parse(lb)?;
        eventually(Duration::from_secs(10), "the projector", || async {
            Ok(env.index_vs_store(&board).await.ok())
        })
        .await?;
        top_is(&stack, lb, &["bystander"]).await?;
    }
    let mut items = env
        .ctx
        .store
        .client()
        .scan()
        .table_name(env.ctx.store.table())
        .into_paginator()
        .items()
        .send();
    let mut scanned = 0;
    while let Some(item) = items.next().await {
        let item = item?;
        scanned += 1;
        assert!(
            !format!("{item:?}").contains(&who),
            "an item still names the player: {item:?}"
        );
    }
    assert!(scanned > 10, "the table was scanned ({scanned} items)");
    let mut conn = env.redis.clone();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}*", env.prefix))
        .query_async(&mut conn)
        .await?;
    assert!(!keys.is_empty());
    for key in keys {
        assert!(!key.contains(&who), "{key}");
        let kind: String = redis::cmd("TYPE").arg(&key).query_async(&mut conn).await?;
        let content: Vec<String> = match kind.as_str() {
            "hash" => {
                redis::cmd("HGETALL")
                    .arg(&key)
                    .query_async(&mut conn)
                    .await?
            }
            "zset" => {
                redis::cmd("ZRANGE")
                    .arg(&key)
                    .arg(0)
                    .arg(-1)
                    .query_async(&mut conn)
                    .await?
            }
            "string" => vec![redis::cmd("GET").arg(&key).query_async(&mut conn).await?],
            other => vec![other.to_owned()],
        };
        assert!(
            content.iter().all(|c| !c.contains(&who)),
            "{key} ({kind}) still names the player"
        );
    }
    // The audit keeps that an erasure happened, and no longer whom any record was about.
    let (_, audit) = stack.get("/admin/audit").await?;
    let records = audit["records"].as_array().unwrap();
    assert_eq!(records[0]["action"], "erase");
    assert_eq!(records[0]["reason"], "GDPR request 42");
    assert!(records.iter().all(|r| r["player_id"].is_null()), "{audit}");
    assert!(!audit.to_string().contains(&who));
    Ok(())
}
