//! A whole match in one request (`POST /matches`, docs/game-server.md), over the local
//! stack on one Redis and on a Redis Cluster. A SUM family (global and two regions,
//! all-time and daily: four boards a player) takes matches of 1, 10 and 100 players: a
//! banned player, a result a rule holds, a score past the boards' range and a player of
//! another region in the 10, each refused or held alone; the 10 retried whole; a match
//! sent twice at once; a match that is no match (a score that is no number, a player
//! twice) refused whole, changing nothing. And a whole match while Redis hangs.
//! After each step every board's reads (the top, a page in rank order, the rows of every
//! player) equal a model that counts each accepted result once: SUM shows a lost or a
//! double-counted result.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Result, ensure};
use futures::future::join;
use serde_json::{Value, json};

use crate::support::{OwnRedis, Stack, cluster_url, eventually, players, redis_url, unique};

/// Each board's totals, by `(scope, period)`: what every accepted result added.
#[derive(Default)]
struct Model {
    boards: BTreeMap<(String, String), BTreeMap<String, i64>>,
    /// The board ids the replies named, by `(scope, period)`.
    ids: BTreeMap<(String, String), String>,
}

impl Model {
    /// Counts a player's accepted result on each board its outcome names, checking the
    /// outcome says what a write through the stages says: accepted, placed by the
    /// write-through (`rank` set), on the player's region and the global scope.
    fn count(&mut self, outcome: &Value, region: &str, score: i64) -> Result<()> {
        let results = outcome["results"].as_array().cloned().unwrap_or_default();
        ensure!(results.len() == 4, "two scopes, two periods: {outcome}");
        for r in &results {
            let scope = r["scope"].as_str().unwrap_or("").to_owned();
            ensure!(scope == "GLOBAL" || scope == region, "{outcome}");
            ensure!(r["update_applied"] == true && r["replayed"] == false, "{r}");
            ensure!(r["rank"].as_u64().is_some_and(|k| k >= 1), "placed: {r}");
            ensure!(
                r["previous_rank"].is_null(),
                "a match reads no rank before: {r}"
            );
            let key = (scope, r["period"].as_str().unwrap_or("").to_owned());
            let lb = r["leaderboard_id"].as_str().unwrap_or("").to_owned();
            self.ids.insert(key.clone(), lb);
            self.add(key, outcome["player_id"].as_str().unwrap_or(""), score);
        }
        Ok(())
    }

    fn add(&mut self, board: (String, String), player: &str, score: i64) {
        let totals = self.boards.entry(board).or_default();
        *totals.entry(player.to_owned()).or_default() += score;
    }

    /// Every board's reads equal its totals (no two totals tie, by the scores chosen).
    async fn reads_equal(&self, stack: &Stack) -> Result<()> {
        for (key, totals) in &self.boards {
            let lb = &self.ids[key];
            let mut want: Vec<(String, i64)> =
                totals.iter().map(|(p, s)| (p.clone(), *s)).collect();
            want.sort_by_key(|r| std::cmp::Reverse(r.1));
            for path in [
                format!("/leaderboards/{lb}/top?n=200"),
                format!("/leaderboards/{lb}/ranks?limit=200"),
            ] {
                let (status, reply) = stack.get(&path).await?;
                ensure!(status == 200, "{path}: {reply}");
                let got = rows(&reply["entries"]);
                ensure!(got == want, "{path}: {got:?} != model {want:?}");
            }
            let players: Vec<&String> = totals.keys().collect();
            let mut listed = Vec::new();
            for chunk in players.chunks(100) {
                let names: Vec<&str> = chunk.iter().map(|p| p.as_str()).collect();
                let path = format!("/leaderboards/{lb}/entries?players={}", names.join(","));
                let (status, reply) = stack.get(&path).await?;
                ensure!(status == 200, "{path}: {reply}");
                listed.extend(rows(&reply["entries"]));
            }
            listed.sort_by_key(|r| std::cmp::Reverse(r.1));
            ensure!(listed == want, "{lb} entries: {listed:?} != model {want:?}");
        }
        Ok(())
    }
}

/// `(player, score)` of a reply's rows, in its order.
fn rows(entries: &Value) -> Vec<(String, i64)> {
    (entries.as_array().into_iter().flatten())
        .map(|e| {
            let p = e["player_id"].as_str().unwrap_or("").to_owned();
            (p, e["score"].as_i64().unwrap_or(0))
        })
        .collect()
}

/// What a player's outcome says once its ranks are left out (a replay reads them as the
/// board stands now) and its replays marked as first writes.
fn first_outcome(outcome: &Value) -> Value {
    let mut o = outcome.clone();
    for r in o["results"].as_array_mut().into_iter().flatten() {
        r["rank"] = Value::Null;
        r["replayed"] = json!(false);
    }
    o
}

async fn whole_matches(redis: &str) -> Result<()> {
    let stack = Stack::launch(
        redis,
        crate::support::StackOptions {
            env: &[("READ_CACHE_TTL_MS", "0")],
            ..Default::default()
        },
    )
    .await?;
    let game = {
        let u = unique("m");
        u[u.len().saturating_sub(30)..].replace('-', "_")
    };
    let family = json!({"game": game, "mode": "duo", "policy": "SUM", "regions": ["EU", "NA"],
        "periods": ["ALL_TIME", "DAILY"], "integrity": {"max_score": 5000}});
    let (status, body) = stack.post("/families", family).await?;
    ensure!(status == 201, "{body}");
    let ban = json!({"reason": "aimbot, ticket 4411"});
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            &format!("/games/{game}/bans/banned"),
            Some(ban),
        )
        .await?;
    ensure!(status == 200, "{body}");
    // Every match at one time, so that a retry goes to the same daily window.
    let at = chrono::Utc::now().timestamp_millis() - 1_000;
    let whole = |match_id: &str, players: Vec<Value>| {
        json!({"game": game, "mode": "duo", "region": "EU", "match_id": match_id,
               "event_ts": at, "players": players})
    };
    let mut model = Model::default();

    // One player.
    let (status, reply) = stack
        .post(
            "/matches",
            whole("m1", vec![json!({"player_id": "solo", "score": 10})]),
        )
        .await?;
    ensure!(
        status == 200 && reply["match_id"] == "m1",
        "{status} {reply}"
    );
    let solo = &reply["players"][0];
    ensure!(
        solo["status"] == 200 && solo["player_id"] == "solo",
        "{reply}"
    );
    model.count(solo, "EU", 10)?;
    model.reads_equal(&stack).await?;

    // A match that is not one is refused whole before anything is written.
    for (players, status, field) in [
        (
            json!([{"player_id": "p0", "score": 5}, {"player_id": "p1", "score": "lots"}]),
            400,
            "players[1].score",
        ),
        (
            json!([{"player_id": "p0", "score": 5}, {"player_id": "p0", "score": 6}]),
            422,
            "players[1].player_id",
        ),
    ] {
        let body = json!({"game": game, "mode": "duo", "region": "EU", "match_id": "m0",
                          "event_ts": at, "players": players});
        let (got, reply) = stack.post("/matches", body).await?;
        ensure!(
            got == status && reply["error"]["field"] == field,
            "{got} {reply}"
        );
    }
    model.reads_equal(&stack).await?;

    // Ten: six honest, one of another region, a banned player, a cheat a rule holds, a
    // score past every board's range. Each refusal is its player's alone.
    let mut ten: Vec<Value> = (0..6)
        .map(|i| json!({"player_id": format!("p{i}"), "score": 100 + i}))
        .collect();
    ten.push(json!({"player_id": "na1", "score": 150, "region": "NA"}));
    ten.push(json!({"player_id": "banned", "score": 50}));
    ten.push(json!({"player_id": "cheat", "score": 9000}));
    ten.push(json!({"player_id": "huge", "score": "9007199254740993"}));
    let (status, first) = stack.post("/matches", whole("m2", ten.clone())).await?;
    ensure!(status == 200, "{status} {first}");
    let outcomes = first["players"].as_array().cloned().unwrap_or_default();
    ensure!(
        outcomes.len() == 10,
        "one outcome per player, in order: {first}"
    );
    for (i, o) in outcomes.iter().enumerate() {
        ensure!(
            o["player_id"] == ten[i]["player_id"],
            "in the request's order: {first}"
        );
    }
    for (o, i) in outcomes.iter().zip(0..6) {
        ensure!(o["status"] == 200, "{o}");
        model.count(o, "EU", 100 + i)?;
    }
    ensure!(outcomes[6]["status"] == 200, "{}", outcomes[6]);
    model.count(&outcomes[6], "NA", 150)?;
    let refused = |o: &Value, status: u16, code: &str| {
        o["status"] == status && o["error"]["code"] == code && o.get("results").is_none()
    };
    ensure!(
        refused(&outcomes[7], 403, "player_banned"),
        "{}",
        outcomes[7]
    );
    let huge = (outcomes[9]["results"].as_array().into_iter().flatten())
        .filter(|r| r["refused"]["code"] == "score_out_of_range")
        .count();
    ensure!(
        outcomes[9]["status"] == 200 && huge == 4,
        "refused on its four boards: {}",
        outcomes[9]
    );
    let cheat = &outcomes[8];
    let held = (cheat["results"].as_array().into_iter().flatten())
        .filter(|r| r["status"] == "HELD" && r["rule"] == "score_range")
        .count();
    ensure!(
        cheat["status"] == 202 && held == 4,
        "held on its four boards: {cheat}"
    );
    model.reads_equal(&stack).await?;
    let (status, queue) = stack.get(&format!("/admin/held?game={game}")).await?;
    let queued = queue["held"].as_array().map_or(0, Vec::len);
    let boards = queue["held"][0]["boards"].as_array().map_or(0, Vec::len);
    ensure!(
        status == 200 && queued == 1 && boards == 4,
        "the cheat's match in the queue once, with its four boards: {queue}"
    );

    // The ten retried whole: each player's first outcome, nothing counted again.
    let (status, again) = stack.post("/matches", whole("m2", ten)).await?;
    ensure!(status == 200, "{status} {again}");
    for (a, o) in (again["players"].as_array().into_iter().flatten()).zip(&outcomes) {
        ensure!(a["status"] == o["status"], "{a} != {o}");
        ensure!(
            first_outcome(a) == first_outcome(o),
            "a retry answers the first: {a} != {o}"
        );
        // Every board that took it answers from its receipt; one that refused it
        // refuses it again.
        let replays = (a["results"].as_array().into_iter().flatten())
            .all(|r| r["replayed"] == true || !r["refused"].is_null());
        ensure!(replays, "{a}");
    }
    model.reads_equal(&stack).await?;

    // A hundred (with metadata: past the 16 KiB of a single result's body), six of them
    // already on the boards, every fifth new one in NA.
    let region = |i: usize| if i % 5 == 4 { "NA" } else { "EU" };
    let mut hundred: Vec<(String, &str, i64)> = (0..6)
        .map(|i| (format!("p{i}"), "EU", 7 + i as i64))
        .collect();
    hundred.extend((0..94).map(|i| (format!("q{i:03}"), region(i), 200 + 3 * i as i64)));
    let players: Vec<Value> = (hundred.iter())
        .map(|(p, r, s)| {
            json!({"player_id": p, "score": s, "region": r,
                   "metadata": {"loadout": "x".repeat(180), "kills": s % 17}})
        })
        .collect();
    let body = whole("m3", players);
    ensure!(
        body.to_string().len() > 16 * 1024,
        "a body only this route takes"
    );
    let (status, reply) = stack.post("/matches", body).await?;
    ensure!(status == 200, "{status} {reply}");
    let outcomes = reply["players"].as_array().cloned().unwrap_or_default();
    ensure!(outcomes.len() == 100, "{reply}");
    for (o, (p, r, s)) in outcomes.iter().zip(&hundred) {
        ensure!(o["status"] == 200 && o["player_id"] == json!(p), "{o}");
        model.count(o, r, *s)?;
    }
    model.reads_equal(&stack).await?;

    // The same match sent twice at once: each board counts each player once, and
    // exactly one of the two copies wrote it.
    let four: Vec<Value> = (0..4)
        .map(|i| json!({"player_id": format!("q{i:03}"), "score": 1000, "region": region(i)}))
        .chain((0..6).map(|i| json!({"player_id": format!("p{i}"), "score": 1000})))
        .collect();
    let (a, b) = join(
        stack.post("/matches", whole("m4", four.clone())),
        stack.post("/matches", whole("m4", four)),
    )
    .await;
    let ((sa, a), (sb, b)) = (a?, b?);
    ensure!(sa == 200 && sb == 200, "{a} {b}");
    for (x, y) in (a["players"].as_array().into_iter().flatten())
        .zip(b["players"].as_array().into_iter().flatten())
    {
        ensure!(x["status"] == 200 && y["status"] == 200, "{x} {y}");
        for i in 0..4 {
            let (rx, ry) = (&x["results"][i], &y["results"][i]);
            let wrote = |r: &Value| r["replayed"] == false;
            ensure!(wrote(rx) != wrote(ry), "one copy wrote board {i}: {x} {y}");
            let written = if wrote(rx) { rx } else { ry };
            ensure!(written["rank"].as_u64().is_some(), "placed: {written}");
            let key = (
                written["scope"].as_str().unwrap_or("").to_owned(),
                written["period"].as_str().unwrap_or("").to_owned(),
            );
            model.add(key, x["player_id"].as_str().unwrap_or(""), 1000);
        }
    }
    model.reads_equal(&stack).await?;
    println!(
        "whole matches ({redis}): 1, 10 and 100 players, a ban, a hold and a bad score refused alone, a whole retry answering the first outcomes, two copies at once counted once; every read of 4 boards equals the model"
    );
    Ok(())
}

#[tokio::test]
async fn a_whole_match_is_recorded_once_per_player_on_a_single_node() -> Result<()> {
    whole_matches(&redis_url()).await
}

#[tokio::test]
async fn a_whole_match_is_recorded_once_per_player_on_a_cluster() -> Result<()> {
    whole_matches(&cluster_url()).await
}

/// A whole match while Redis hangs (SIGSTOP), on boards that exist: every player is
/// recorded (DynamoDB is the truth) and answered without a rank, reads answer from
/// DynamoDB, degraded; once Redis answers again the stream's projector brings the board
/// to the model, and a retry of the match answers each player's first outcome.
#[tokio::test]
async fn a_whole_match_while_redis_hangs_is_recorded_and_reaches_the_index_later() -> Result<()> {
    let mut redis = OwnRedis::reserve();
    redis.start().await?;
    let stack = Stack::launch(
        &redis.url(),
        crate::support::StackOptions {
            env: &[("READ_CACHE_TTL_MS", "0")],
            ..Default::default()
        },
    )
    .await?;
    let game = {
        let u = unique("h");
        u[u.len().saturating_sub(30)..].replace('-', "_")
    };
    let family = json!({"game": game, "mode": "duo", "policy": "BEST", "regions": ["EU"],
        "periods": ["ALL_TIME"]});
    let (status, body) = stack.post("/families", family).await?;
    ensure!(status == 201, "{body}");
    let whole = |match_id: &str, players: &[(String, i64)]| {
        let players: Vec<Value> = (players.iter())
            .map(|(p, s)| json!({"player_id": p, "score": s}))
            .collect();
        json!({"game": game, "mode": "duo", "region": "EU", "match_id": match_id,
               "players": players})
    };
    // A first match creates the boards while Redis answers.
    let first = [("w0".to_owned(), 1)];
    let (status, reply) = stack.post("/matches", whole("warm", &first)).await?;
    ensure!(status == 200, "{reply}");
    let lb = reply["players"][0]["results"][0]["leaderboard_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();

    redis.pause();
    let twenty: Vec<(String, i64)> = (0..20).map(|i| (format!("h{i:02}"), 100 + i)).collect();
    let body = whole("h1", &twenty);
    let (status, reply) = stack.post("/matches", body.clone()).await?;
    ensure!(status == 200, "{status} {reply}");
    for o in reply["players"].as_array().into_iter().flatten() {
        let results = o["results"].as_array().cloned().unwrap_or_default();
        ensure!(o["status"] == 200 && results.len() == 2, "{o}");
        for r in &results {
            ensure!(
                r["update_applied"] == true && r["rank"].is_null(),
                "no rank: {r}"
            );
        }
    }
    let mut want: Vec<String> = twenty.iter().rev().map(|(p, _)| p.clone()).collect();
    want.push("w0".into());
    let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=50")).await?;
    ensure!(status == 200 && top["source"] == "dynamodb", "{top}");
    ensure!(players(&top, "entries") == want, "{top}");

    redis.resume();
    let top = eventually(
        Duration::from_secs(20),
        "the projector catches up",
        || async {
            let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=50")).await?;
            Ok((status == 200 && top["source"] == "redis" && top["total"] == 21).then_some(top))
        },
    )
    .await?;
    ensure!(players(&top, "entries") == want, "{top}");
    // The retry answers from the receipts, with the ranks Redis has once this function's
    // own connection is back (until then a replay is answered without a rank, as a
    // degraded write is): every retry is a replay, and a rank it gives is the right one.
    eventually(
        Duration::from_secs(20),
        "a retry answers with ranks",
        || async {
            let (status, again) = stack.post("/matches", body.clone()).await?;
            ensure!(status == 200, "{again}");
            let mut ranked = 0;
            for (i, o) in again["players"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let r = &o["results"][0];
                ensure!(r["replayed"] == true, "{o}");
                if !r["rank"].is_null() {
                    ensure!(r["rank"] == json!(20 - i), "{o}");
                    ranked += 1;
                }
            }
            Ok((ranked == twenty.len()).then_some(()))
        },
    )
    .await?;
    Ok(())
}
