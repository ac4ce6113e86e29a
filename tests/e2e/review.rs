//! Results a cheater cannot put on top (docs/integrity.md), over the local stack on a
//! single Redis and on a Redis Cluster: a board with every judging rule, honest results
//! and a cheat against each rule (each retried), two operators approving the same held
//! result at once, approvals and rejections. After every step every public read (top,
//! each player's rank, the rows of every player) equals the model built from the honest
//! results plus the approved ones; held results are only in the queue; a double
//! approval applies once; a rejected match's retry is refused.

use std::collections::BTreeMap;

use anyhow::{Result, ensure};
use serde_json::{Value, json};

use crate::support::{Stack, cluster_url, drain, eventually, redis_url, subscribe, unique};

/// The model: each player's BEST standing from the results that count.
#[derive(Default)]
struct Model(BTreeMap<String, i64>);

impl Model {
    fn count(&mut self, p: &str, s: i64) {
        let best = self.0.entry(p.to_owned()).or_insert(s);
        *best = (*best).max(s);
    }

    /// `(player, score)` best first (ties: none in this test).
    fn ranked(&self) -> Vec<(String, i64)> {
        let mut rows: Vec<_> = self.0.iter().map(|(p, s)| (p.clone(), *s)).collect();
        rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        rows
    }
}

/// `(player, score)` of the rows under `field` of a reply that have a score.
fn rows(reply: &Value, field: &str) -> Vec<(String, i64)> {
    (reply[field].as_array().into_iter().flatten())
        .filter(|e| !e["score"].is_null())
        .map(|e| {
            (
                e["player_id"].as_str().unwrap_or("").to_owned(),
                e["score"].as_i64().unwrap_or(0),
            )
        })
        .collect()
}

/// Every public read of the board against the model: the top, a page in rank order,
/// the live top view, a friends view (the first player's friends are everyone), each
/// player's rank and score (404 for a player whose only results are held or rejected),
/// and the rows of every player at once.
async fn reads_equal(stack: &Stack, lb: &str, model: &Model, everyone: &[&str]) -> Result<()> {
    let want = model.ranked();
    let viewer = everyone[0];
    for (path, field) in [
        (format!("/leaderboards/{lb}/top?n=50"), "entries"),
        (format!("/leaderboards/{lb}/ranks?limit=100"), "entries"),
        (format!("/leaderboards/{lb}/live/top?n=50"), "entries"),
        (
            format!("/leaderboards/{lb}/players/{viewer}/friends-rank?k=20"),
            "neighbors",
        ),
    ] {
        let (status, reply) = stack.get(&path).await?;
        ensure!(status == 200, "{path}: {reply}");
        let got = rows(&reply, field);
        ensure!(got == want, "{path}: {got:?} != model {want:?}");
    }
    for p in everyone {
        let (status, rank) = stack
            .get(&format!("/leaderboards/{lb}/players/{p}/rank"))
            .await?;
        match want.iter().position(|(q, _)| q == p) {
            Some(i) => {
                ensure!(status == 200, "{p}: {rank}");
                ensure!(
                    rank["global_rank"] == json!(i + 1),
                    "{p}: {rank} (want rank {})",
                    i + 1
                );
                ensure!(rank["score"] == json!(want[i].1), "{p}: {rank}");
            }
            None => ensure!(status == 404, "{p} should have no standing: {rank}"),
        }
    }
    let (status, rows) = stack
        .get(&format!(
            "/leaderboards/{lb}/entries?players={}",
            everyone.join(",")
        ))
        .await?;
    ensure!(status == 200, "{rows}");
    let listed: Vec<(String, i64)> = (rows["entries"].as_array().into_iter().flatten())
        .filter(|e| !e["score"].is_null())
        .map(|e| {
            (
                e["player_id"].as_str().unwrap_or("").to_owned(),
                e["score"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    let mut sorted = listed.clone();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    ensure!(sorted == want, "entries {listed:?} != model {want:?}");
    Ok(())
}

async fn post(stack: &Stack, lb: &str, p: &str, body: Value) -> Result<(u16, Value)> {
    stack
        .post(&format!("/leaderboards/{lb}/players/{p}/score"), body)
        .await
}

/// The board's queue, oldest first: `(player, match, rule, id)`.
async fn queue(stack: &Stack, lb: &str) -> Result<Vec<(String, String, String, String)>> {
    let (status, page) = stack
        .get(&format!("/admin/held?board={lb}&limit=100"))
        .await?;
    ensure!(status == 200, "{page}");
    Ok((page["held"].as_array().into_iter().flatten())
        .map(|h| {
            let s = |k: &str| h[k].as_str().unwrap_or("").to_owned();
            (s("player_id"), s("match_id"), s("rule"), s("id"))
        })
        .collect())
}

async fn decide(stack: &Stack, id: &str, decision: &str) -> Result<(u16, Value)> {
    let body = json!({"decision": decision, "reason": "reviewed the replay"});
    stack.post(&format!("/admin/held/{id}"), body).await
}

/// A dry run's report as (player, rule) pairs, sorted.
fn would_hold(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = (report["would_hold"].as_array().into_iter().flatten())
        .map(|w| {
            let s = |k: &str| w[k].as_str().unwrap_or("").to_owned();
            (s("player_id"), s("rule"))
        })
        .collect();
    out.sort();
    out
}

async fn review_model(redis: &str) -> Result<()> {
    // Every read goes to the index (no 250 ms reply cache), so each checkpoint sees the
    // step before it.
    let stack = Stack::start_with(redis, &[("READ_CACHE_TTL_MS", "0")]).await?;
    let lb = unique("fair");
    let rules = json!({"max_score": 10000, "max_gain": 1000, "max_results_per_minute": 3,
                       "max_top_factor": 2, "min_duration_seconds": 30});
    let (status, created) = stack
        .post(
            "/leaderboards",
            json!({"leaderboard_id": lb, "integrity": rules}),
        )
        .await?;
    ensure!(status == 201, "{created}");
    ensure!(
        created["integrity"]["max_top_factor"] == json!(2.0),
        "{created}"
    );
    let (sqs, queue_url) = subscribe(&stack, "leaderboard.result.held").await?;
    let mut model = Model::default();
    let everyone = [
        "h1", "h2", "h3", "c_gain", "c_rate", "c_range", "c_top", "c_dur",
    ];
    stack.set_friends("h1", &everyone[1..]).await?;
    let long = json!({"duration_ms": 95_000});
    // Honest results: each passes every rule, and counts.
    let honest = [
        ("h1", "h1a", 1000),
        ("h2", "h2a", 1500),
        ("h3", "h3a", 800),
        ("h1", "h1b", 1900),
        ("c_gain", "g1", 900),
        ("c_rate", "r1", 100),
        ("c_rate", "r2", 110),
        ("c_rate", "r3", 120),
    ];
    for (p, m, s) in honest {
        let (status, r) = post(
            &stack,
            &lb,
            p,
            json!({"new_score": s, "match_id": m, "metadata": long}),
        )
        .await?;
        ensure!(
            status == 200 && r.get("status").is_none(),
            "{p} {m}: {status} {r}"
        );
        model.count(p, s);
    }
    reads_equal(&stack, &lb, &model, &everyone).await?;
    // A cheat against each rule: held (202), and a retry answers the same.
    let cheats = [
        (
            "c_range",
            "x1",
            json!({"new_score": 50000, "match_id": "x1"}),
            "score_range",
        ),
        (
            "c_gain",
            "g2",
            json!({"new_score": 2500, "match_id": "g2"}),
            "max_gain",
        ),
        (
            "c_top",
            "t1",
            json!({"new_score": 5000, "match_id": "t1"}),
            "past_top",
        ),
        (
            "c_dur",
            "d1",
            json!({"new_score": 1200, "match_id": "d1", "metadata": {"duration_ms": 4000}}),
            "min_duration",
        ),
        (
            "c_rate",
            "r4",
            json!({"new_score": 130, "match_id": "r4"}),
            "rate",
        ),
    ];
    for (p, m, body, rule) in &cheats {
        for attempt in 0..2 {
            let (status, r) = post(&stack, &lb, p, body.clone()).await?;
            ensure!(status == 202, "{p} {m} attempt {attempt}: {status} {r}");
            ensure!(r["status"] == "HELD" && r["rule"] == *rule, "{p} {m}: {r}");
            ensure!(
                r["update_applied"] == false && r["replayed"] == json!(attempt == 1),
                "{r}"
            );
        }
        reads_equal(&stack, &lb, &model, &everyone).await?;
    }
    // Each hold went on the bus once, from its queue item (retries held nothing new).
    let seen = std::sync::Mutex::new(Vec::new());
    let events = eventually(std::time::Duration::from_secs(20), "5 held events", || {
        let (sqs, url, seen) = (&sqs, &queue_url, &seen);
        async move {
            let fresh = drain(sqs, url).await?;
            let mut all = seen.lock().expect("not poisoned");
            all.extend(fresh);
            Ok((all.len() >= 5).then(|| all.clone()))
        }
    })
    .await?;
    let mut announced: Vec<(String, String)> = (events.iter())
        .map(|e| {
            let d = &e["detail"];
            let s = |k: &str| d[k].as_str().unwrap_or("").to_owned();
            (s("player_id"), s("rule"))
        })
        .collect();
    announced.sort();
    let mut want: Vec<(String, String)> = (cheats.iter())
        .map(|(p, _, _, rule)| ((*p).to_owned(), (*rule).to_owned()))
        .collect();
    want.sort();
    ensure!(announced == want, "held events {announced:?} != {want:?}");
    // The dry run: on a board without rules that took the same results, the same rules
    // would have held exactly the cheats' standings, each by its rule.
    let open = unique("open");
    let (status, body) = stack
        .post("/leaderboards", json!({"leaderboard_id": open}))
        .await?;
    ensure!(status == 201, "{body}");
    for (p, m, s) in honest {
        let body = json!({"new_score": s, "match_id": m, "metadata": long});
        ensure!(post(&stack, &open, p, body).await?.0 == 200);
    }
    for (p, _, body, _) in &cheats {
        ensure!(post(&stack, &open, p, body.clone()).await?.0 == 200);
    }
    let dry = json!({"leaderboard_id": open, "integrity": rules});
    let (status, report) = stack.post("/admin/integrity/dry-run", dry.clone()).await?;
    ensure!(status == 200 && report["checked"] == 8, "{report}");
    let flagged = would_hold(&report);
    ensure!(flagged == want, "dry run {flagged:?} != {want:?}: {report}");
    // The same with the board's index gone: judged from DynamoDB, by the moderation
    // function's own role (the local stack holds its calls to the template's policy).
    let env = stack.inspect(redis, &crate::support::dynamodb_url()).await;
    env.wipe_index(&leaderboard_rules::ids::LeaderboardId::parse(&open)?)
        .await;
    let (status, again) = stack.post("/admin/integrity/dry-run", dry).await?;
    ensure!(status == 200 && again["checked"] == 8, "{again}");
    let from_store = would_hold(&again);
    ensure!(
        from_store == want,
        "from DynamoDB {from_store:?} != {want:?}: {again}"
    );
    // The same match with another score is a conflict, not a second hold.
    let (status, r) = post(
        &stack,
        &lb,
        "c_top",
        json!({"new_score": 5001, "match_id": "t1"}),
    )
    .await?;
    ensure!(status == 409, "{r}");
    let held = queue(&stack, &lb).await?;
    let rules_held: Vec<&str> = held.iter().map(|h| h.2.as_str()).collect();
    ensure!(
        rules_held
            == [
                "score_range",
                "max_gain",
                "past_top",
                "min_duration",
                "rate"
            ],
        "{held:?}"
    );
    let id_of = |p: &str| {
        held.iter()
            .find(|h| h.0 == p)
            .map(|h| h.3.clone())
            .unwrap_or_default()
    };
    // Two operators approve the top cheat's result at the same time: it applies once.
    let top_id = id_of("c_top");
    let (a, b) = tokio::join!(
        decide(&stack, &top_id, "approve"),
        decide(&stack, &top_id, "approve")
    );
    let (a, b) = (a?, b?);
    ensure!(a.0 == 200 && b.0 == 200, "{a:?} {b:?}");
    let fresh = [&a.1, &b.1]
        .iter()
        .filter(|r| r["replayed"] == false)
        .count();
    ensure!(fresh == 1, "exactly one approval applies: {a:?} {b:?}");
    model.count("c_top", 5000);
    reads_equal(&stack, &lb, &model, &everyone).await?;
    // Rejecting what was approved is a conflict; approving again replays.
    ensure!(decide(&stack, &top_id, "reject").await?.0 == 409);
    ensure!(decide(&stack, &top_id, "approve").await?.1["replayed"] == true);
    // A gain approved applies as BEST would have (900 -> 2500); the rate cheat's 130
    // beats its 120; the range and duration cheats are rejected.
    for (p, decision, counts) in [
        ("c_gain", "approve", Some(2500)),
        ("c_rate", "approve", Some(130)),
        ("c_range", "reject", None),
        ("c_dur", "reject", None),
    ] {
        let (status, r) = decide(&stack, &id_of(p), decision).await?;
        ensure!(status == 200 && r["replayed"] == false, "{p}: {r}");
        if let Some(s) = counts {
            model.count(p, s);
        }
        reads_equal(&stack, &lb, &model, &everyone).await?;
    }
    ensure!(
        queue(&stack, &lb).await?.is_empty(),
        "the queue is empty once decided"
    );
    // A rejected match's retry is refused; an approved one's replays its receipt.
    let (status, r) = post(&stack, &lb, "c_dur", cheats[3].2.clone()).await?;
    ensure!(
        status == 409 && r["error"]["code"] == "result_rejected",
        "{status} {r}"
    );
    let (status, r) = post(&stack, &lb, "c_gain", cheats[1].2.clone()).await?;
    ensure!(
        status == 200 && r["replayed"] == true && r["score"] == 2500,
        "{status} {r}"
    );
    reads_equal(&stack, &lb, &model, &everyone).await?;
    // Every decision is in the audit trail.
    let (_, audit) = stack.get("/admin/audit?limit=50").await?;
    let decided = (audit["records"].as_array().into_iter().flatten())
        .filter(|r| r["leaderboard_id"] == json!(lb))
        .filter(|r| r["action"] == "approve_result" || r["action"] == "reject_result")
        .count();
    ensure!(decided == 5, "five decisions audited: {audit}");
    println!(
        "review model ({redis}): 8 honest results, 5 cheats held (each retried), 1 double approval applied once, 3 approved, 2 rejected; every read equals the model at 12 checkpoints"
    );
    Ok(())
}

#[tokio::test]
async fn held_results_stay_off_every_read_until_approved_once_on_a_single_node() -> Result<()> {
    review_model(&redis_url()).await
}

#[tokio::test]
async fn held_results_stay_off_every_read_until_approved_once_on_a_cluster() -> Result<()> {
    review_model(&cluster_url()).await
}

/// A family's season window with rules, over `POST /scores`: a held result is held on
/// each board it would change (GLOBAL and the region), one approved on both boards
/// before the window closes, one rejected; once the window closes and is sealed, the
/// sealed results equal the model too, and the queue is empty.
async fn family_model(redis: &str) -> Result<()> {
    let stack = Stack::launch(
        redis,
        crate::support::StackOptions {
            env: &[("SEAL_SETTLE_SECONDS", "1"), ("READ_CACHE_TTL_MS", "0")],
            ..Default::default()
        },
    )
    .await?;
    let game = {
        let u = unique("g");
        u[u.len().saturating_sub(30)..].replace('-', "_")
    };
    let now = chrono::Utc::now().timestamp_millis();
    // Long enough for the steps before the close on a busy machine (a result after the
    // season's end is refused as outside it).
    let end = now + 30_000;
    let ts = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    let family = json!({"game": game, "mode": "ranked", "policy": "BEST", "regions": ["EU"],
        "periods": ["SEASON"], "grace_seconds": 0,
        "season": {"id": "s1", "start": ts(now - 3_600_000), "end": ts(end)},
        "integrity": {"max_score": 5000, "max_gain": 1000, "ban_after_rejections": 2}});
    let (status, body) = stack.post("/families", family).await?;
    ensure!(status == 201, "{body}");
    let boards = [
        format!("{game}:ranked:GLOBAL:SEASON:s1"),
        format!("{game}:ranked:EU:SEASON:s1"),
    ];
    let everyone = ["f1", "f2", "f3", "cheat_a", "cheat_b", "cheat_c"];
    stack.set_friends("f1", &everyone[1..]).await?;
    let result = |p: &str, m: &str, s: i64| {
        json!({"game": game, "mode": "ranked", "region": "EU", "player_id": p,
               "match_id": m, "score": s})
    };
    let mut model = Model::default();
    for (p, m, s) in [
        ("f1", "a", 900),
        ("f2", "b", 700),
        ("f3", "c", 400),
        ("cheat_a", "d", 300),
        ("f3", "e", 1300),
    ] {
        let (status, r) = stack.post("/scores", result(p, m, s)).await?;
        ensure!(status == 200, "{p} {m}: {r}");
        model.count(p, s);
    }
    // cheat_a gains 2000 at once; cheat_b posts past the range. Each is held on both
    // boards (202), and a retry answers the same.
    for (p, m, s, rule) in [
        ("cheat_a", "x", 2300, "max_gain"),
        ("cheat_b", "y", 9000, "score_range"),
        ("cheat_c", "w", 7000, "score_range"),
    ] {
        for _ in 0..2 {
            let (status, r) = stack.post("/scores", result(p, m, s)).await?;
            ensure!(status == 202, "{p}: {status} {r}");
            let held: Vec<&Value> = (r["results"].as_array().into_iter().flatten())
                .filter(|o| o["status"] == "HELD" && o["rule"] == rule)
                .collect();
            ensure!(held.len() == 2, "held on both boards: {r}");
        }
    }
    for lb in &boards {
        reads_equal(&stack, lb, &model, &everyone).await?;
    }
    let (status, page) = stack.get(&format!("/admin/held?game={game}")).await?;
    ensure!(status == 200, "{page}");
    let held = page["held"].as_array().cloned().unwrap_or_default();
    // Three matches, each listed once with the two boards that held it.
    ensure!(held.len() == 3, "three matches: {page}");
    for h in &held {
        let mut on: Vec<&str> = (h["boards"].as_array().into_iter().flatten())
            .filter_map(|b| b["leaderboard_id"].as_str())
            .collect();
        on.sort_unstable();
        let mut want: Vec<&str> = boards.iter().map(String::as_str).collect();
        want.sort_unstable();
        ensure!(on == want, "both boards: {h}");
    }
    // cheat_c's wait in the queue until the window is sealed.
    let (later, held): (Vec<Value>, Vec<Value>) =
        held.into_iter().partition(|h| h["player_id"] == "cheat_c");
    // One decision per match decides both boards. Two operators decide the same match
    // at once, and for cheat_a a third the other way: one decision stands, whichever
    // came first, and each board is decided once.
    let mut a_approved = false;
    for h in &held {
        let id = h["id"].as_str().unwrap_or("");
        let cheat_a = h["player_id"] == "cheat_a";
        let (decision, other) = if cheat_a {
            ("approve", "reject")
        } else {
            ("reject", "reject")
        };
        let (a, b, c) = tokio::join!(
            decide(&stack, id, decision),
            decide(&stack, id, decision),
            decide(&stack, id, other)
        );
        let replies = [a?, b?, c?];
        let won: Vec<&Value> = (replies.iter())
            .filter(|(s, _)| *s == 200)
            .map(|(_, r)| r)
            .collect();
        let stands = won
            .first()
            .map(|r| r["decision"].clone())
            .unwrap_or_default();
        ensure!(
            won.iter().all(|r| r["decision"] == stands),
            "one decision: {replies:?}"
        );
        for (status, r) in &replies {
            ensure!(
                *status == 200 || (*status == 409 && r["error"]["code"] == "already_decided"),
                "{status} {r}"
            );
        }
        let fresh = (won.iter())
            .flat_map(|r| r["boards"].as_array().into_iter().flatten())
            .filter(|d| d["replayed"] == false)
            .count();
        ensure!(fresh == 2, "each board decided once: {replies:?}");
        ensure!(
            won.iter().all(|r| r["banned"] == false),
            "one match is one rejection"
        );
        if cheat_a {
            a_approved = stands == "APPROVED";
        } else {
            ensure!(stands == "REJECTED", "{replies:?}");
        }
    }
    let (_, page) = stack.get(&format!("/admin/held?game={game}")).await?;
    ensure!(
        page["held"].as_array().map(Vec::len) == Some(1),
        "cheat_c's: {page}"
    );
    // cheat_b's second rejected match reaches ban_after_rejections (2): banned.
    let (status, r) = stack.post("/scores", result("cheat_b", "y2", 9500)).await?;
    ensure!(status == 202, "{r}");
    let (_, page) = stack
        .get(&format!("/admin/held?game={game}&player=cheat_b"))
        .await?;
    let id = page["held"][0]["id"].as_str().unwrap_or("").to_owned();
    let (status, r) = decide(&stack, &id, "reject").await?;
    ensure!(status == 200 && r["banned"] == true, "{r}");
    ensure!(r["boards"].as_array().map(Vec::len) == Some(2), "{r}");
    let (status, r) = stack.post("/scores", result("cheat_b", "z", 10)).await?;
    ensure!(
        status == 403 && r["error"]["code"] == "player_banned",
        "{status} {r}"
    );
    if a_approved {
        model.count("cheat_a", 2300);
    }
    for lb in &boards {
        reads_equal(&stack, lb, &model, &everyone).await?;
    }
    // The window closes and is sealed: its results are the model's.
    let wait = (end + 1_500 - chrono::Utc::now().timestamp_millis()).max(0) as u64;
    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
    let sealed = eventually(
        std::time::Duration::from_secs(30),
        "the window sealed",
        || async {
            let (status, r) = stack
                .post("/admin/seal", json!({"leaderboard_id": boards[0]}))
                .await?;
            ensure!(status == 200 || status == 202 || status == 409, "{r}");
            let (status, results) = stack
                .get(&format!("/leaderboards/{}/results", boards[0]))
                .await?;
            Ok((status == 200).then_some(results))
        },
    )
    .await?;
    let got = rows(&sealed, "entries");
    ensure!(
        got == model.ranked(),
        "sealed {got:?} != model {:?}",
        model.ranked()
    );
    // A match held on a window sealed since cannot be approved (its sealed results are
    // final), on no board; it can be rejected, on both.
    for h in &later {
        let id = h["id"].as_str().unwrap_or("");
        let (status, r) = decide(&stack, id, "approve").await?;
        ensure!(
            status == 409 && r["error"]["code"] == "window_sealed",
            "{status} {r}"
        );
        let (status, r) = decide(&stack, id, "reject").await?;
        ensure!(status == 200 && r["decision"] == "REJECTED", "{r}");
        ensure!(r["boards"].as_array().map(Vec::len) == Some(2), "{r}");
    }
    let (status, results) = stack
        .get(&format!("/leaderboards/{}/results", boards[0]))
        .await?;
    ensure!(
        status == 200 && rows(&results, "entries") == got,
        "{results}"
    );
    let (_, page) = stack.get(&format!("/admin/held?game={game}")).await?;
    ensure!(page["held"].as_array().is_some_and(Vec::is_empty), "{page}");
    println!(
        "family review model ({redis}): 5 honest results, 3 cheats held on 2 boards each (retried), each listed once; 1 approved and 1 rejected once per match (3 operators at once) before the close, a second rejected match banning, 1 refused approval on the sealed window; every read of both boards and the sealed results equal the model"
    );
    Ok(())
}

#[tokio::test]
async fn a_familys_held_results_stay_off_its_boards_and_its_sealed_results_on_a_single_node()
-> Result<()> {
    family_model(&redis_url()).await
}

#[tokio::test]
async fn a_familys_held_results_stay_off_its_boards_and_its_sealed_results_on_a_cluster()
-> Result<()> {
    family_model(&cluster_url()).await
}
