//! Integrity rules changed after creation, over HTTP on the local stack: a family's new
//! rules reach every board of it that takes results (and the boards it creates next),
//! from the next result on; one board's rules change alone; results decided before keep
//! their decision; every change is audited with the rules before and after; and what is
//! not a change (no reason, no rules, rules that cannot hold, a closed board) changes
//! nothing.

use anyhow::{Result, ensure};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, redis_url, unique};

/// Each board's outcome of a result, by board id: `HELD` or the standing's score.
fn outcomes(reply: &Value) -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = (reply["results"].as_array().into_iter().flatten())
        .map(|r| {
            let lb = r["leaderboard_id"].as_str().unwrap_or_default().to_owned();
            let what = if r["status"] == "HELD" {
                json!("HELD")
            } else {
                r["score"].clone()
            };
            (lb, what)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn a_familys_rules_change_for_its_open_boards_and_a_boards_alone() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let game = {
        let u = unique("gr");
        u[u.len().saturating_sub(30)..].to_owned()
    };
    let family = json!({"game": game, "mode": "duel", "policy": "BEST", "regions": ["EU"],
        "periods": ["ALL_TIME", "DAILY"], "integrity": {"max_score": 1000}});
    let (status, body) = stack.post("/families", family.clone()).await?;
    ensure!(status == 201, "{body}");
    let result = |p: &str, m: &str, s: i64| json!({"game": game, "mode": "duel", "region": "EU", "player_id": p, "match_id": m, "score": s});
    let (status, r) = stack.post("/scores", result("ann", "m1", 900)).await?;
    ensure!(status == 200, "{r}");
    let boards: Vec<String> = outcomes(&r).into_iter().map(|(lb, _)| lb).collect();
    ensure!(boards.len() == 4, "GLOBAL and EU, all-time and daily: {r}");
    let (status, r) = stack.post("/scores", result("bob", "m1", 5000)).await?;
    ensure!(status == 202, "held under the first rules: {r}");

    // Refused, changing nothing: no reason, no rules, rules that cannot hold, no family.
    let path = format!("/families/{game}/duel/integrity");
    let put = async |path: &str, body: Value| stack.call(Method::PUT, path, Some(body)).await;
    for (body, status, field) in [
        (json!({"integrity": {"max_score": 10000}}), 400, "reason"),
        (json!({"reason": "raise the cap"}), 400, "integrity"),
        (
            json!({"integrity": {"min_score": 10, "max_score": 5}, "reason": "x"}),
            422,
            "integrity.max_score",
        ),
        (
            json!({"integrity": {"max_score": "lots"}, "reason": "x"}),
            400,
            "integrity.max_score",
        ),
    ] {
        let (got, reply) = put(&path, body.clone()).await?;
        ensure!(got == status, "{body}: {got} {reply}");
        ensure!(reply["error"]["field"] == field, "{body}: {reply}");
    }
    let (status, _) = put(
        &format!("/families/{game}/nosuch/integrity"),
        json!({"integrity": {}, "reason": "x"}),
    )
    .await?;
    ensure!(status == 404);
    let (_, fam) = stack.get(&format!("/families/{game}/duel")).await?;
    ensure!(fam["integrity"]["max_score"] == 1000, "unchanged: {fam}");

    // The family's cap raised: every open board gets it, audited, and the next result
    // of 5000 counts everywhere; the one held before stays held.
    let (status, changed) = put(
        &path,
        json!({"integrity": {"max_score": 10000}, "reason": "new season, higher scores"}),
    )
    .await?;
    ensure!(status == 200, "{changed}");
    ensure!(
        changed["family"]["integrity"]["max_score"] == 10000,
        "{changed}"
    );
    ensure!(changed["previous"]["max_score"] == 1000, "{changed}");
    let mut swept: Vec<String> = serde_json::from_value(changed["boards"].clone())?;
    swept.sort();
    ensure!(swept == boards, "every open board: {changed}");
    for lb in &boards {
        let (_, b) = stack.get(&format!("/leaderboards/{lb}")).await?;
        ensure!(b["integrity"]["max_score"] == 10000, "{lb}: {b}");
    }
    let (status, r) = stack.post("/scores", result("cid", "m1", 5000)).await?;
    ensure!(status == 200, "counts under the new rules: {r}");
    let (status, page) = stack.get(&format!("/admin/held?game={game}")).await?;
    let boards_held = page["held"][0]["boards"].as_array().map_or(0, Vec::len);
    ensure!(
        status == 200 && page["held"].as_array().map(Vec::len) == Some(1) && boards_held == 4,
        "bob's match stays held on its 4 boards: {page}"
    );
    let (status, r) = stack.post("/scores", result("dan", "m1", 20000)).await?;
    ensure!(status == 202, "held past the new cap: {r}");

    // One board's rules alone: none on the EU all-time board, so 30000 counts there only.
    let eu = format!("{game}:duel:EU:ALL_TIME");
    let (status, one) = put(
        &format!("/leaderboards/{eu}/integrity"),
        json!({"integrity": {}, "reason": "EU tournament qualifier"}),
    )
    .await?;
    ensure!(status == 200, "{one}");
    ensure!(
        one["board"].get("integrity").is_none() && one["previous"]["max_score"] == 10000,
        "{one}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await; // the cached definitions
    let (status, r) = stack.post("/scores", result("eve", "m1", 30000)).await?;
    ensure!(status == 202, "held on the other boards: {r}");
    for (lb, what) in outcomes(&r) {
        let want = if lb == eu {
            json!(30000)
        } else {
            json!("HELD")
        };
        ensure!(what == want, "{lb}: {what} in {r}");
    }

    // A closed board's rules are past changing.
    let closed = unique("closed");
    let (status, _) = stack
        .post("/leaderboards", json!({"leaderboard_id": closed}))
        .await?;
    ensure!(status == 201);
    let (status, _) = stack
        .call(
            Method::PATCH,
            &format!("/leaderboards/{closed}"),
            Some(json!({"status": "CLOSED"})),
        )
        .await?;
    ensure!(status == 200);
    let (status, reply) = put(
        &format!("/leaderboards/{closed}/integrity"),
        json!({"integrity": {"max_score": 5}, "reason": "x"}),
    )
    .await?;
    ensure!(status == 409, "{reply}");

    // The audit trail: both changes, with the rules before and after.
    let (_, audit) = stack.get("/admin/audit?limit=200").await?;
    let mine: Vec<&Value> = (audit["records"].as_array().into_iter().flatten())
        .filter(|r| r["action"] == "set_integrity")
        .filter(|r| r["game"] == game.as_str() || r["leaderboard_id"] == eu.as_str())
        .collect();
    ensure!(mine.len() == 2, "{audit}");
    ensure!(
        mine[0]["leaderboard_id"] == eu.as_str() && mine[0]["reason"] == "EU tournament qualifier",
        "{:?}",
        mine[0]
    );
    ensure!(
        mine[1]["detail"]["before"]["max_score"] == 1000
            && mine[1]["detail"]["after"]["max_score"] == 10000,
        "{:?}",
        mine[1]
    );
    Ok(())
}
