//! The operator console (infra/console) in a real headless Chromium over the local
//! stack: an operator creates a board, finds a player, removes their entry and sees
//! the top recover, bans a cheater and sees their next result refused, reads the audit
//! trail naming them, and edits a stream mapping. Every step asserts what the page
//! shows, and the API confirms what the page claims. Screenshots of the main pages go
//! to the stack's run folder (and to `LB_CONSOLE_SCREENSHOTS`, the docs' copies).

use std::time::Duration;

use anyhow::{Context as _, Result};
use serde_json::json;

use crate::support::*;

const WAIT: Duration = Duration::from_secs(10);

/// Saves what the page shows as `name`.png.
async fn shoot(page: &mut Browser, stack: &Stack, name: &str) -> Result<()> {
    // Let the last replies paint.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let png = page.screenshot().await?;
    std::fs::write(stack.run_dir.join(format!("console-{name}.png")), &png)?;
    // A relative folder is the repository's (the test runs in tests/).
    if let Ok(dir) = std::env::var("LB_CONSOLE_SCREENSHOTS") {
        std::fs::write(root().join(dir).join(format!("console-{name}.png")), &png)?;
    }
    Ok(())
}

/// Puts a letter on the stack's dead-letter queue (SQS on the local endpoint).
async fn dead_letter(stack: &Stack, body: &str) -> Result<()> {
    let url = format!(
        "{}/123456789012/{}-StreamDeadLetterQueue",
        dynamodb_url(),
        stack.table
    );
    let resp = stack
        .http
        .post(dynamodb_url())
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amz-target", "AmazonSQS.SendMessage")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=test/20261127/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0",
        )
        .body(json!({"QueueUrl": url, "MessageBody": body}).to_string())
        .send()
        .await?;
    let status = resp.status();
    anyhow::ensure!(
        status.is_success(),
        "SendMessage: {status} {}",
        resp.text().await?
    );
    Ok(())
}

/// The players on the page's top table, in order.
const TOP: &str = "[...document.querySelectorAll('#top tbody tr')].map(r => r.dataset.player)";

#[tokio::test]
async fn an_operator_finds_removes_bans_audits_and_edits_a_mapping_in_the_console() -> Result<()> {
    let built = root().join("infra/console/dist/app.js");
    anyhow::ensure!(
        built.exists(),
        "the console is not built ({}): infra/test.sh runs `npm ci && npm run build` in infra/console",
        built.display()
    );
    let stack = Stack::start(&redis_url()).await?;
    let profile = stack.run_dir.join("chromium");
    let mut page = Browser::open(&format!("{}/#/boards", stack.console), &profile).await?;
    page.until_text("h2", "Boards", Duration::from_secs(20))
        .await?;
    page.fill("#operator", "ana-ops").await?;

    // A board id the API refuses: its error, next to the field; nothing is created.
    page.fill("#create-board-leaderboard_id", "bad id!").await?;
    page.click("#create-board button[type=submit]").await?;
    let refused = page
        .until_text(
            "#create-board .error[data-for=leaderboard_id]",
            "invalid_request",
            WAIT,
        )
        .await?;
    assert!(
        refused.contains("leaderboard_id: contains ' '"),
        "{refused}"
    );
    let (_, listed) = stack.get("/admin/view/leaderboards").await?;
    assert_eq!(listed["boards"], json!([]), "a refused board was created");

    // The board, created in the console; results posted by the game servers.
    let lb = "cg:duel:s1";
    page.fill("#create-board-leaderboard_id", lb).await?;
    page.click("#create-board button[type=submit]").await?;
    page.until_text("#board-id", lb, WAIT).await?;
    for (i, p) in ["ana", "ben", "cleo", "dev", "eli", "cheat"]
        .iter()
        .enumerate()
    {
        stack.post_score(lb, p, "m1", 100 * (i as i64 + 1)).await?;
    }
    page.until(
        TOP,
        json!(["cheat", "eli", "dev", "cleo", "ben", "ana"]),
        WAIT,
    )
    .await?;
    // Rows carry the players' names (as text, never markup) and countries.
    let (status, body) = stack
        .call(
            reqwest::Method::PUT,
            "/players/eli/profile",
            Some(json!({"display_name": "Eli <b>Swift</b>", "country": "SE"})),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    page.until(
        "(r => r && [r.querySelector('.player').textContent, r.querySelector('.cc')?.textContent])\
         (document.querySelector('#top tr[data-player=eli]'))",
        json!(["Eli <b>Swift</b>", "SE"]),
        WAIT,
    )
    .await?;
    assert_eq!(
        page.eval("document.querySelectorAll('#top b').length")
            .await?,
        json!(0)
    );
    // One more through the console's own form (a correction needs its reason).
    page.fill("#post-result-player", "fay").await?;
    page.fill("#post-result-new_score", "350").await?;
    page.fill("#post-result-op", "set").await?;
    page.click("#post-result button[type=submit]").await?;
    page.until_text("#post-result .error[data-for=reason]", "reason", WAIT)
        .await?;
    page.fill("#post-result-reason", "support ticket 4411")
        .await?;
    page.click("#post-result button[type=submit]").await?;
    page.until_text("#post-result .done", "fay: 350, #4 of 7", WAIT)
        .await?;
    page.until(
        TOP,
        json!(["cheat", "eli", "dev", "fay", "cleo", "ben", "ana"]),
        WAIT,
    )
    .await?;

    // Find a player: their rank and neighbours.
    page.fill("#find-player input[name=player]", "cleo").await?;
    page.click("#find-player button").await?;
    let found = page.until_text("#found", "#5 of 7", WAIT).await?;
    assert!(found.contains("score 300"), "{found}");
    page.until(
        "[...document.querySelectorAll('#neighbours tbody tr')].map(r => [r.dataset.player, r.className])",
        json!([["eli", ""], ["dev", ""], ["fay", ""], ["cleo", "me"], ["ben", ""], ["ana", ""]]),
        WAIT,
    )
    .await?;
    page.until_text("#health", "ready", WAIT).await?;
    shoot(&mut page, &stack, "board").await?;

    // The cheater's page: remove the entry (asked first), and the top recovers.
    page.goto(&format!("{}/#/players/cheat", stack.console))
        .await?;
    page.until_text("#player-id", "cheat", WAIT).await?;
    page.fill("#remove-entry-leaderboard_id", lb).await?;
    page.fill("#remove-entry-reason", "aimbot, ticket 4412")
        .await?;
    page.click("#remove-entry button[type=submit]").await?;
    page.until_text(
        "#remove-entry .confirm",
        "Remove cheat from cg:duel:s1?",
        WAIT,
    )
    .await?;
    let (status, _) = stack
        .get(&format!("/admin/view/leaderboards/{lb}/players/cheat/rank"))
        .await?;
    assert_eq!(status, 200, "removed before the confirmation");
    page.click("#remove-entry .confirm-yes").await?;
    page.until_text("#remove-entry .done", "Removed from cg:duel:s1", WAIT)
        .await?;
    page.goto(&format!("{}/#/boards/{lb}", stack.console))
        .await?;
    page.until(
        TOP,
        json!(["eli", "dev", "fay", "cleo", "ben", "ana"]),
        WAIT,
    )
    .await?;

    // A ban: the game's family board refuses the cheater's next result, in the page.
    let (status, body) = stack
        .post(
            "/families",
            json!({"game": "cg", "mode": "ranked", "regions": ["eu"], "periods": ["ALL_TIME"]}),
        )
        .await?;
    assert_eq!(status, 201, "{body}");
    let (status, played) = stack
        .post(
            "/scores",
            json!({"game": "cg", "mode": "ranked", "region": "eu", "player_id": "cheat", "match_id": "r1", "score": 900}),
        )
        .await?;
    assert_eq!(status, 200, "{played}");
    let family_board = played["results"][0]["leaderboard_id"]
        .as_str()
        .context("no family board")?
        .to_owned();
    page.goto(&format!("{}/#/players/cheat", stack.console))
        .await?;
    page.until_text("#player-id", "cheat", WAIT).await?;
    page.fill("#ban-game", "cg").await?;
    page.fill("#ban-reason", "aimbot confirmed").await?;
    page.click("#ban button[type=submit]").await?;
    page.click("#ban .confirm-yes").await?;
    let boards = played["results"].as_array().map_or(0, Vec::len);
    page.until_text(
        "#ban .done",
        &format!("Banned from cg; {boards} standings removed"),
        WAIT,
    )
    .await?;
    page.fill("#standings input[name=game]", "cg").await?;
    page.click("#standings button").await?;
    page.until_text("#standings-rows", "not_ranked", WAIT)
        .await?;
    // The page shows the ban: the game, its reason.
    page.until(&rows("#player-bans", "game"), json!(["cg"]), WAIT)
        .await?;
    page.until_text("#player-bans", "aimbot confirmed", WAIT)
        .await?;
    shoot(&mut page, &stack, "player").await?;
    page.goto(&format!("{}/#/boards/{family_board}", stack.console))
        .await?;
    page.until_text("#board-id", &family_board, WAIT).await?;
    page.fill("#post-result-player", "cheat").await?;
    page.fill("#post-result-new_score", "950").await?;
    page.click("#post-result button[type=submit]").await?;
    page.until_text("#post-result .form-error", "player_banned", WAIT)
        .await?;
    let (status, _) = stack
        .get(&format!(
            "/admin/view/leaderboards/{family_board}/players/cheat/rank"
        ))
        .await?;
    assert_eq!(status, 404, "a banned player's result was taken");

    // The game's bans: a second cheater banned through the API is listed too; one is
    // lifted from the list (asked first), and the player's page says so.
    let (status, _) = stack
        .call(
            reqwest::Method::PUT,
            "/games/cg/bans/smurf",
            Some(json!({"reason": "smurfing"})),
        )
        .await?;
    assert_eq!(status, 200);
    page.goto(&format!("{}/#/bans/cg", stack.console)).await?;
    page.until(&rows("#bans", "player"), json!(["cheat", "smurf"]), WAIT)
        .await?;
    page.until_text("#bans tr[data-player=smurf] .reason", "smurfing", WAIT)
        .await?;
    shoot(&mut page, &stack, "bans").await?;
    page.click("#bans tr[data-player=smurf] .lift").await?;
    page.fill("#lift-ban-reason", "appeal upheld").await?;
    page.click("#lift-ban button[type=submit]").await?;
    page.until_text("#lift-ban .confirm", "Lift smurf's ban from cg?", WAIT)
        .await?;
    page.click("#lift-ban .confirm-yes").await?;
    page.until(&rows("#bans", "player"), json!(["cheat"]), WAIT)
        .await?;
    let (_, listed) = stack.get("/games/cg/bans").await?;
    assert_eq!(listed["bans"].as_array().map(Vec::len), Some(1), "{listed}");
    page.goto(&format!("{}/#/players/smurf", stack.console))
        .await?;
    page.until_text("#player-bans-none", "Banned from no game", WAIT)
        .await?;

    // The audit trail names the operator, each action and its reason; it filters.
    page.goto(&format!("{}/#/audit", stack.console)).await?;
    let rows = "[...document.querySelectorAll('#audit tbody tr')].map(r => [r.dataset.action, r.querySelector('.actor').textContent, r.querySelector('.reason').textContent])";
    let ops = "arn:aws:iam::000000000000:user/ana-ops";
    page.until(
        rows,
        json!([
            ["unban", ops, "appeal upheld"],
            [
                "ban",
                "arn:aws:iam::000000000000:user/local-operator",
                "smurfing"
            ],
            ["ban", ops, "aimbot confirmed"],
            ["remove_entry", ops, "aimbot, ticket 4412"],
            ["set_score", ops, "support ticket 4411"]
        ]),
        WAIT,
    )
    .await?;
    page.fill("#audit-filter", "ban").await?;
    page.until(
        "[...document.querySelectorAll('#audit tbody tr')].map(r => r.dataset.action)",
        json!(["unban", "ban", "ban"]),
        WAIT,
    )
    .await?;
    page.fill("#audit-filter", "").await?;
    shoot(&mut page, &stack, "audit").await?;

    // A mapping: a broken one is refused before saving and stores nothing; then saved.
    // The page counts stream ingest's dead letters (one put there as stream ingest does).
    dead_letter(
        &stack,
        r#"{"source":"pod-9","code":"not_json","payload":"{oops"}"#,
    )
    .await?;
    page.goto(&format!("{}/#/ingest", stack.console)).await?;
    page.until_text("#dead-letters", "Dead letters: 1 waiting", WAIT)
        .await?;
    page.fill("#open-mapping input[name=source]", "pod-9")
        .await?;
    page.click("#open-mapping button").await?;
    page.until_text("#mapping-version", "no mapping yet", WAIT)
        .await?;
    let good = json!({"fields": {"player_id": "/user/id", "match_id": "/match", "score": "/points",
        "game": {"const": "cg"}, "mode": {"const": "ranked"}, "region": {"const": "eu"}}});
    let mut broken = good.clone();
    broken["fields"]["score"] = json!({"const": "5"});
    page.fill("#mapping-text", &serde_json::to_string_pretty(&broken)?)
        .await?;
    page.click("#validate-mapping").await?;
    let note = page
        .until_text("#mapping-note", "invalid_request", WAIT)
        .await?;
    assert!(note.contains("score"), "{note}");
    page.click("#save-mapping").await?;
    page.until_text("#mapping-note", "invalid_request", WAIT)
        .await?;
    let (status, _) = stack.get("/admin/mappings/pod-9").await?;
    assert_eq!(status, 404, "a refused mapping was stored");
    page.fill("#mapping-text", &serde_json::to_string_pretty(&good)?)
        .await?;
    page.click("#validate-mapping").await?;
    page.until_text("#mapping-note", "Valid: it would be version 1", WAIT)
        .await?;
    page.click("#save-mapping").await?;
    page.until_text("#mapping-note", "Saved as version 1", WAIT)
        .await?;
    page.until_text("#mapping-version", "version 1", WAIT)
        .await?;
    let (status, stored) = stack.get("/admin/mappings/pod-9").await?;
    assert_eq!(
        (status, &stored["fields"]["score"]),
        (200, &json!("/points"))
    );
    shoot(&mut page, &stack, "ingest").await?;

    // The cache as its control plane describes it: three shards and their slots.
    page.goto(&format!("{}/#/cache", stack.console)).await?;
    page.until(
        "[...document.querySelectorAll('#shards tbody tr .slots')].map(c => c.textContent)",
        json!(["0-5460", "5461-10922", "10923-16383"]),
        WAIT,
    )
    .await?;
    page.until_text("#unavailable", "DescribeEvents is not offered", WAIT)
        .await?;
    shoot(&mut page, &stack, "cache").await?;
    page.goto(&format!("{}/#/boards", stack.console)).await?;
    page.until_text("#boards", &family_board, WAIT).await?;
    shoot(&mut page, &stack, "boards").await?;
    Ok(())
}

/// A call as the console's support role makes it on the local stack (the role named in
/// `x-operator-role`, held by the gateway to SupportRole's policy in template.yaml).
pub(crate) async fn as_support(
    stack: &Stack,
    method: reqwest::Method,
    path: &str,
    body: serde_json::Value,
) -> Result<(u16, serde_json::Value)> {
    let resp = (stack.http.request(method, format!("{}{path}", stack.api)))
        .header("x-api-key", API_KEY)
        .header("x-operator", "sam-support")
        .header("x-operator-role", "support")
        .json(&body)
        .send()
        .await?;
    let status = resp.status().as_u16();
    Ok((status, resp.json().await?))
}

/// The rows of the table `selector` names, as the attribute `data` of each.
fn rows(selector: &str, data: &str) -> String {
    format!("[...document.querySelectorAll('{selector} tbody tr')].map(r => r.dataset.{data})")
}

#[tokio::test]
async fn live_ops_find_a_player_by_name_run_a_tournament_review_results_and_support_reads_only()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let profile = stack.run_dir.join("chromium");
    let mut page = Browser::open(&format!("{}/#/players", stack.console), &profile).await?;
    page.until_text("h2", "Find players by name", Duration::from_secs(20))
        .await?;
    page.fill("#operator", "lia-ops").await?;

    // Players found by a prefix of their name, accents and case aside; the name reset.
    for (p, name) in [
        ("zoe", "Zoë Ångström"),
        ("zol", "Zoltán"),
        ("emi", "Émilie"),
    ] {
        let (status, body) = stack
            .call(
                reqwest::Method::PUT,
                &format!("/players/{p}/profile"),
                Some(json!({"display_name": name, "country": "SE"})),
            )
            .await?;
        assert_eq!(status, 200, "{body}");
    }
    for (prefix, want) in [
        ("ZOË", json!(["zoe"])),
        ("zo", json!(["zoe", "zol"])),
        ("emi", json!(["emi"])),
    ] {
        page.fill("#find-by-name input[name=prefix]", prefix)
            .await?;
        page.click("#find-by-name button").await?;
        page.until(&rows("#found-players", "player"), want, WAIT)
            .await?;
    }
    page.fill("#find-by-name input[name=prefix]", "zoe").await?;
    page.click("#find-by-name button").await?;
    page.until(&rows("#found-players", "player"), json!(["zoe"]), WAIT)
        .await?;
    shoot(&mut page, &stack, "find-players").await?;
    page.click("#found-players a").await?;
    page.until_text("#profile-name", "Zoë Ångström", WAIT)
        .await?;
    page.fill("#reset-name-reason", "offensive name, ticket 5120")
        .await?;
    page.click("#reset-name button[type=submit]").await?;
    page.until_text("#reset-name .confirm", "Reset zoe's name", WAIT)
        .await?;
    page.click("#reset-name .confirm-yes").await?;
    page.until_text("#reset-done", "The name is reset", WAIT)
        .await?;
    page.until_text("#profile-name", "-", WAIT).await?;
    // The reset is among the audit entries about zoe, with its reason.
    page.click("#player-audit-show").await?;
    page.until(
        &rows("#player-audit", "action"),
        json!(["reset_profile"]),
        WAIT,
    )
    .await?;
    page.until_text("#player-audit", "offensive name, ticket 5120", WAIT)
        .await?;
    let (_, zoe) = stack.get("/admin/view/players/zoe/profile").await?;
    assert_eq!(zoe["display_name"], json!(null), "{zoe}");
    let (_, found) = stack.get("/admin/players?name_prefix=zo").await?;
    assert_eq!(found["players"][0]["player_id"], "zol", "{found}");

    // A tournament defined in the form; players join through the API; the cohorts'
    // standings on its page are the API's.
    page.goto(&format!("{}/#/tournaments", stack.console))
        .await?;
    page.until_text("#create-tournament", "Create", WAIT)
        .await?;
    for (field, value) in [
        ("tournament_id", "cup1"),
        ("game", "cg"),
        ("mode", "duel"),
        ("title", "Friday Cup"),
        ("schedule", "DAILY"),
        ("cohort_size", "2"),
        ("max_players", "4"),
    ] {
        page.fill(&format!("#create-tournament-{field}"), value)
            .await?;
    }
    page.click("#create-tournament button[type=submit]").await?;
    page.until_text("#tournament-id", "cup1", WAIT).await?;
    page.until_text("#no-cohorts", "No cohort yet", WAIT)
        .await?;
    let (status, defined) = stack.get("/admin/view/tournaments").await?;
    assert_eq!(status, 200);
    assert_eq!(defined["tournaments"][0]["cohort_size"], 2, "{defined}");
    assert_eq!(defined["tournaments"][0]["schedule"]["period"], "DAILY");
    let mut cohort_of = std::collections::BTreeMap::new();
    for (p, s) in [("ana", 70), ("bo", 40), ("cy", 90), ("di", 10)] {
        let (status, joined) = stack
            .post(&format!("/tournaments/cup1/players/{p}/join"), json!({}))
            .await?;
        assert_eq!(status, 200, "{joined}");
        let cohort = joined["cohort_leaderboard_id"]
            .as_str()
            .unwrap_or("-")
            .to_owned();
        cohort_of.insert(p, cohort);
        let (status, body) = stack
            .post(
                &format!("/tournaments/cup1/players/{p}/score"),
                json!({"new_score": s, "match_id": "m1"}),
            )
            .await?;
        assert_eq!(status, 200, "{body}");
    }
    page.click("#cohorts-refresh").await?;
    let cohorts: std::collections::BTreeSet<&String> = cohort_of.values().collect();
    assert_eq!(cohorts.len(), 2, "{cohort_of:?}");
    let mut want = Vec::new();
    for lb in &cohorts {
        let (_, top) = stack
            .get(&format!("/admin/view/leaderboards/{lb}/top?n=10"))
            .await?;
        let players: Vec<_> = (top["entries"].as_array().into_iter().flatten())
            .map(|e| e["player_id"].clone())
            .collect();
        assert_eq!(players.len(), 2, "{top}");
        want.push(players);
    }
    page.until(
        "[...document.querySelectorAll('#cohorts .cohort')].map(c => [...c.querySelectorAll('tbody tr')].map(r => r.dataset.player))",
        json!(want),
        WAIT,
    )
    .await?;
    shoot(&mut page, &stack, "tournament").await?;

    // The review queue: two held results; one approved, one rejected, in the page.
    let (status, body) = stack
        .post(
            "/leaderboards",
            json!({"leaderboard_id": "cg:held", "policy": "BEST", "integrity": {"max_score": 1000}}),
        )
        .await?;
    assert_eq!(status, 201, "{body}");
    stack.post_score("cg:held", "honest", "m1", 900).await?;
    for (p, s) in [("c1", 5000), ("c2", 6000)] {
        let (status, held) = stack
            .post(
                &format!("/leaderboards/cg:held/players/{p}/score"),
                json!({"new_score": s, "match_id": "x1", "metadata": {"map": "dust", "kills": 41}}),
            )
            .await?;
        assert_eq!((status, &held["status"]), (202, &json!("HELD")), "{held}");
    }
    page.goto(&format!("{}/#/review", stack.console)).await?;
    page.click("#held-filter button").await?;
    page.until(&rows("#held", "player"), json!(["c1", "c2"]), WAIT)
        .await?;
    page.until(
        &rows("#held", "rule"),
        json!(["score_range", "score_range"]),
        WAIT,
    )
    .await?;
    shoot(&mut page, &stack, "review").await?;
    page.fill("#approve-0-reason", "verified replay").await?;
    page.click("#approve-0 button[type=submit]").await?;
    page.click("#approve-0 .confirm-yes").await?;
    page.until_text("#held tr[data-n='0'] .decision", "APPROVED", WAIT)
        .await?;
    page.fill("#reject-1-reason", "impossible score").await?;
    page.click("#reject-1 button[type=submit]").await?;
    page.click("#reject-1 .confirm-yes").await?;
    page.until_text("#held tr[data-n='1'] .decision", "REJECTED", WAIT)
        .await?;
    let (_, top) = stack
        .get("/admin/view/leaderboards/cg:held/top?n=10")
        .await?;
    let on_top: Vec<_> = (top["entries"].as_array().into_iter().flatten())
        .map(|e| (e["player_id"].clone(), e["score"].clone()))
        .collect();
    assert_eq!(
        on_top,
        vec![(json!("c1"), json!(5000)), (json!("honest"), json!(900))],
        "{top}"
    );
    let (_, queue) = stack.get("/admin/held").await?;
    assert_eq!(queue["held"], json!([]), "{queue}");
    // A family's match held on both its boards is listed once, and one rejection
    // decides it on both.
    let (status, body) = stack
        .post(
            "/families",
            json!({"game": "cgf", "mode": "duel", "regions": ["eu"], "periods": ["ALL_TIME"],
                   "integrity": {"max_score": 1000}}),
        )
        .await?;
    assert_eq!(status, 201, "{body}");
    let (status, held) = stack
        .post(
            "/scores",
            json!({"game": "cgf", "mode": "duel", "region": "eu", "player_id": "c3", "match_id": "f1", "score": 7000}),
        )
        .await?;
    assert_eq!(status, 202, "{held}");
    page.goto(&format!("{}/#/review/cgf", stack.console))
        .await?;
    page.until(&rows("#held", "player"), json!(["c3"]), WAIT)
        .await?;
    page.until(
        "[...document.querySelectorAll('#held td.boards')].map(t => t.dataset.boards)",
        json!(["2"]),
        WAIT,
    )
    .await?;
    page.fill("#reject-0-reason", "speed hack").await?;
    page.click("#reject-0 button[type=submit]").await?;
    page.until_text("#reject-0 .confirm", "on its 2 boards?", WAIT)
        .await?;
    page.click("#reject-0 .confirm-yes").await?;
    page.until_text("#held tr[data-n='0'] .decision", "REJECTED", WAIT)
        .await?;
    let (_, queue) = stack.get("/admin/held?game=cgf").await?;
    assert_eq!(queue["held"], json!([]), "decided on both boards: {queue}");
    for scope in ["GLOBAL", "eu"] {
        let (status, _) = stack
            .get(&format!(
                "/admin/view/leaderboards/cgf:duel:{scope}:ALL_TIME/players/c3/rank"
            ))
            .await?;
        assert_eq!(status, 404, "a rejected result stays off {scope}");
    }
    // The board's rules changed: a dry run first (which standings the new cap would
    // have held), then applied with a reason; the next result of 1500 counts.
    page.goto(&format!("{}/#/boards/cg:held", stack.console))
        .await?;
    page.until_text("#rules-now", "\"max_score\":1000", WAIT)
        .await?;
    page.fill("#rules-text", r#"{"max_score": 2000}"#).await?;
    assert!(
        page.eval("document.querySelector('#rules-apply') === null")
            .await?
            == json!(true),
        "no apply before a dry run"
    );
    page.click("#rules-dry-run").await?;
    page.until(&rows("#rules-would-hold", "player"), json!(["c1"]), WAIT)
        .await?;
    page.until_text("#rules-checked", "1 of the best 2 standings", WAIT)
        .await?;
    page.fill("#rules-apply-reason", "higher cap for the weekend event")
        .await?;
    page.click("#rules-apply button[type=submit]").await?;
    page.until_text(
        "#rules-apply .confirm",
        "Apply these rules to cg:held",
        WAIT,
    )
    .await?;
    page.eval("document.querySelector('#rules').scrollIntoView()")
        .await?;
    shoot(&mut page, &stack, "rules").await?;
    page.click("#rules-apply .confirm-yes").await?;
    page.until_text("#rules-now", "\"max_score\":2000", WAIT)
        .await?;
    let (_, board) = stack.get("/leaderboards/cg:held").await?;
    assert_eq!(board["integrity"], json!({"max_score": 2000}), "{board}");
    tokio::time::sleep(Duration::from_millis(1200)).await; // cached definitions expire
    let (status, counted) = stack
        .post(
            "/leaderboards/cg:held/players/mid/score",
            json!({"new_score": 1500, "match_id": "x2"}),
        )
        .await?;
    assert_eq!(status, 200, "{counted}");
    // The board exported from its page: the link reads a file that is the board.
    page.fill("#export-reason", "community post").await?;
    page.click("#export button[type=submit]").await?;
    page.until_text("#export .confirm", "Write cg:held's standings", WAIT)
        .await?;
    page.click("#export .confirm-yes").await?;
    let link = "document.querySelector('#exports-list a.export-link')?.href ?? null";
    page.until(&format!("({link}) !== null"), json!(true), WAIT)
        .await?;
    let href = page.eval(link).await?;
    let file = reqwest::get(href.as_str().context("a link")?).await?;
    assert_eq!(file.status(), 200);
    let text = file.text().await?;
    let in_file: Vec<&str> = (text.lines().skip(1))
        .map(|l| l.split(',').nth(1).unwrap_or_default())
        .collect();
    let walked = stack
        .walk(
            "/leaderboards/cg:held/ranks?limit=100",
            "entries",
            "player_id",
        )
        .await?;
    assert_eq!(in_file, walked, "{text}");
    page.eval("document.querySelector('#exports').scrollIntoView()")
        .await?;
    shoot(&mut page, &stack, "exports").await?;

    // The approved player's page: their standing on every open board, no id typed.
    page.goto(&format!("{}/#/players/c1", stack.console))
        .await?;
    page.until_text("#player-id", "c1", WAIT).await?;
    page.click("#standings-all").await?;
    page.until(
        &rows("#standings-all-rows", "board"),
        json!(["cg:held"]),
        WAIT,
    )
    .await?;
    page.until_text("#standings-all-rows", "#1 of 3", WAIT)
        .await?;
    // With the result it stands on: the approved one, its metadata as the game sent it.
    page.until_text("#standings-all-rows .result", "map: dust", WAIT)
        .await?;

    // Support: the same pages, no action in them, and the API refuses one anyway.
    page.fill("#role", "support").await?;
    page.goto(&format!("{}/#/players/ana", stack.console))
        .await?;
    page.until_text("#player-id", "ana", WAIT).await?;
    page.until_text("#read-only", "Support role", WAIT).await?;
    // Her tournament, and her place in her cohort, as the operators' view reads it.
    let (status, cohort) = stack
        .get("/admin/view/tournaments/cup1/players/ana/cohort")
        .await?;
    assert_eq!(status, 200, "{cohort}");
    assert_eq!(
        cohort["leaderboard_id"],
        json!(cohort_of["ana"]),
        "{cohort}"
    );
    let place = cohort["rank"].as_u64().context("ana has a place")?;
    page.until(
        "[...document.querySelectorAll('#player-tournaments tbody tr')].map(r => [r.dataset.tournament, r.dataset.rank])",
        json!([["cup1", place.to_string()]]),
        WAIT,
    )
    .await?;
    for absent in ["#ban", "#erase", "#remove-entry", "#reset-name"] {
        let there = page
            .eval(&format!("document.querySelector('{absent}') !== null"))
            .await?;
        assert_eq!(there, json!(false), "{absent} shown to support");
    }
    shoot(&mut page, &stack, "support").await?;
    page.goto(&format!("{}/#/players", stack.console)).await?;
    page.fill("#find-by-name input[name=prefix]", "Émi").await?;
    page.click("#find-by-name button").await?;
    page.until(&rows("#found-players", "player"), json!(["emi"]), WAIT)
        .await?;
    page.goto(&format!("{}/#/tournaments/cup1", stack.console))
        .await?;
    page.until(
        "[...document.querySelectorAll('#cohorts .cohort')].length",
        json!(2),
        WAIT,
    )
    .await?;
    let forms = page
        .eval("document.querySelector('#create-tournament') !== null")
        .await?;
    assert_eq!(forms, json!(false), "support may not define tournaments");
    let (status, refused) = as_support(
        &stack,
        reqwest::Method::PUT,
        "/games/cg/bans/ana",
        json!({"reason": "support tried"}),
    )
    .await?;
    assert_eq!(status, 403, "{refused}");
    let (status, read) = as_support(
        &stack,
        reqwest::Method::GET,
        "/admin/players?name_prefix=zo",
        json!(null),
    )
    .await?;
    assert_eq!(status, 200, "{read}");
    let (_, trail) = stack.get("/admin/audit").await?;
    let actions: Vec<_> = (trail["records"].as_array().into_iter().flatten())
        .map(|r| r["action"].clone())
        .collect();
    assert!(!actions.contains(&json!("ban")), "{trail}");
    Ok(())
}

/// The outcome rows the league page shows: (player, tier after, marked as differing).
const OUTCOMES: &str = "[...document.querySelectorAll('#league-outcomes tr[data-player]')]\
     .map(r => [r.dataset.player, r.dataset.after, r.className === 'differs'])";

/// The rows a dry run's reply makes, in the page's order.
fn outcome_rows(reply: &serde_json::Value) -> serde_json::Value {
    let mut rows = Vec::new();
    for c in reply["cohorts"].as_array().into_iter().flatten() {
        let differs = c["differs"].as_array().cloned().unwrap_or_default();
        for m in c["members"].as_array().into_iter().flatten() {
            let p = m["player_id"].clone();
            rows.push(json!([p, m["tier_after"], differs.contains(&p)]));
        }
    }
    json!(rows)
}

#[tokio::test]
async fn a_leagues_settled_outcomes_and_a_changed_leagues_dry_run_in_the_console() -> Result<()> {
    use leaderboard_core::service::tournaments;
    const DAY: i64 = 86_400_000;
    let stack = Stack::start_with(&redis_url(), &[("SEAL_SETTLE_SECONDS", "1")]).await?;
    let league = json!({"tiers": [
        {"id": "bronze", "promote": {"count": 1},
         "rewards": [{"from_rank": 1, "to_rank": 1, "reward": "chest"}]},
        {"id": "silver", "demote": {"count": 1}}]});
    let def = json!({"tournament_id": "daily-league", "game": "lg", "mode": "race",
        "title": "Daily league", "schedule": {"period": "DAILY"}, "cohort_size": 3,
        "grace_seconds": 0, "league": league});
    let (status, body) = stack.post("/tournaments", def).await?;
    assert_eq!(status, 201, "{body}");

    // Yesterday's occurrence, played and sealed: six players, each with a result.
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let now = leaderboard_rules::time::now_ms();
    env.ctx.clock.set(Some((now / DAY - 1) * DAY + 3_600_000));
    let mut key = String::new();
    for i in 0..6 {
        let p = player(&format!("p{i}"));
        let (joined, _) = tournaments::join(&env.ctx, "daily-league", &p).await?;
        key = joined.occurrence;
        let body = result("m1", 10 * (i + 1));
        tournaments::submit(&env.ctx, "daily-league", &p, body, &operator()).await?;
    }
    env.ctx.clock.set(None);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    stack.seal_all().await?;
    let dry = format!("/tournaments/daily-league/occurrences/{key}/league/dry-run");
    let (status, settled) = stack.post(&dry, json!({"league": league})).await?;
    assert_eq!(status, 200, "{settled}");
    let promoted = outcome_rows(&settled)
        .as_array()
        .map_or(0, |r| r.iter().filter(|r| r[1] == "silver").count());
    assert!(promoted > 0, "the seal promoted someone: {settled}");

    // The page: the occurrence before the current one, its outcomes as the seal decided.
    let profile = stack.run_dir.join("chromium");
    let mut page = Browser::open(
        &format!("{}/#/tournaments/daily-league", stack.console),
        &profile,
    )
    .await?;
    page.until(
        "document.querySelector('#league-occurrence')?.value ?? null",
        json!(key),
        Duration::from_secs(20),
    )
    .await?;
    page.click("#league-show").await?;
    page.until(OUTCOMES, outcome_rows(&settled), WAIT).await?;

    // A changed league (two promoted): the members it decides otherwise are marked.
    let mut changed = league.clone();
    changed["tiers"][0]["promote"] = json!({"count": 2});
    let (status, tried) = stack.post(&dry, json!({"league": changed})).await?;
    assert_eq!(status, 200, "{tried}");
    let marked = outcome_rows(&tried);
    assert!(
        marked
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r[2] == true)),
        "{tried}"
    );
    page.fill("#league-text", &changed.to_string()).await?;
    page.click("#league-show").await?;
    page.until(OUTCOMES, marked, WAIT).await?;
    page.eval("document.querySelector('#league-outcomes').scrollIntoView()")
        .await?;
    shoot(&mut page, &stack, "league").await?;

    // The changed league applied from the page (support may not), then a new title: the
    // definition changes, each change audited with its reason.
    let (status, refused) = as_support(
        &stack,
        reqwest::Method::PATCH,
        "/tournaments/daily-league",
        json!({"league": changed, "reason": "support tries"}),
    )
    .await?;
    assert_eq!(status, 403, "{refused}");
    page.fill("#league-apply-reason", "two promoted from now on")
        .await?;
    page.click("#league-apply button[type=submit]").await?;
    page.until_text("#league-apply .confirm", "from its next seal on", WAIT)
        .await?;
    page.click("#league-apply .confirm-yes").await?;
    page.until_text("#league-apply .done", "Applied", WAIT)
        .await?;
    page.fill("#edit-tournament-title", "Daily league II")
        .await?;
    page.fill("#edit-tournament-reason", "season two").await?;
    page.click("#edit-tournament button[type=submit]").await?;
    page.until_text("#edit-tournament .confirm", "Daily league II", WAIT)
        .await?;
    page.click("#edit-tournament .confirm-yes").await?;
    page.until_text("h2", "Daily league II", WAIT).await?;
    let (_, list) = stack.get("/admin/view/tournaments").await?;
    let now_defined = (list["tournaments"].as_array().into_iter().flatten())
        .find(|t| t["tournament_id"] == "daily-league")
        .context("daily-league listed")?;
    assert_eq!(now_defined["title"], "Daily league II", "{now_defined}");
    assert_eq!(
        now_defined["league"]["tiers"], changed["tiers"],
        "{now_defined}"
    );
    let (_, trail) = stack.get("/admin/audit").await?;
    let updates: Vec<_> = (trail["records"].as_array().into_iter().flatten())
        .filter(|r| r["action"] == "update_tournament")
        .map(|r| (r["reason"].clone(), r["detail"]["changed"].clone()))
        .collect();
    assert_eq!(
        updates,
        [
            (json!("season two"), json!(["title"])),
            (json!("two promoted from now on"), json!(["league"])),
        ],
        "{trail}"
    );

    // Each member's page: their tier now and what the seal decided, as the API says.
    let first = &settled["cohorts"][0]["members"][0];
    let who = first["player_id"].as_str().unwrap_or("-").to_owned();
    let (status, standing) = stack
        .get(&format!(
            "/admin/view/tournaments/daily-league/players/{who}/league"
        ))
        .await?;
    assert_eq!(status, 200, "{standing}");
    assert_eq!(standing["tier"], first["tier_after"], "{standing}");
    page.goto(&format!("{}/#/players/{who}", stack.console))
        .await?;
    page.until(
        "[...document.querySelectorAll('#leagues tbody tr')].map(r => [r.dataset.tournament, r.dataset.tier])",
        json!([["daily-league", standing["tier"]]]),
        WAIT,
    )
    .await?;
    let seal = format!(
        "{key}: #{} in cohort {}, {} → {}",
        first["rank"],
        settled["cohorts"][0]["cohort"],
        first["tier_before"].as_str().unwrap_or("-"),
        first["tier_after"].as_str().unwrap_or("-")
    );
    page.until_text("#leagues", &seal, WAIT).await?;

    // A board reset from its page, confirmed first: once done, the page shows the
    // archive's sealed results, and the board is empty.
    let lb = stack.create_board("crs").await?;
    for (p, s) in [("r1", 30), ("r2", 20), ("r3", 10)] {
        stack.post_score(&lb, p, "m1", s).await?;
    }
    page.goto(&format!("{}/#/boards/{lb}", stack.console))
        .await?;
    // Its reward table set from the page first (a reset pays a board without a window).
    page.until_text("#reward-table", "No reward table", WAIT)
        .await?;
    let table = r#"{"ranges":[{"from_rank":1,"to_rank":1,"reward":"crown"},{"top_percent":100,"reward":"coin","quantity":5}]}"#;
    page.fill("#set-rewards-rewards", table).await?;
    page.fill("#set-rewards-reason", "the weekend event's prizes")
        .await?;
    page.click("#set-rewards button[type=submit]").await?;
    page.until_text("#set-rewards .confirm", "reward table", WAIT)
        .await?;
    page.click("#set-rewards .confirm-yes").await?;
    page.until_text("#reward-ranges", "crown", WAIT).await?;
    page.until_text("#reset", "Never reset", WAIT).await?;
    page.fill("#reset-form-reason", "exploit in the weekend event")
        .await?;
    page.click("#reset-form button[type=submit]").await?;
    page.until_text("#reset-form .confirm", &format!("Reset {lb} now?"), WAIT)
        .await?;
    page.click("#reset-form .confirm-yes").await?;
    let status = "document.querySelector('#reset-status')?.dataset.status ?? null";
    page.until(status, json!("DONE"), Duration::from_secs(30))
        .await?;
    let archive = format!(".sealed-results[data-board='{lb}.reset-1']");
    page.until_text(&archive, "3 players", WAIT).await?;
    // The page's walk of the board, read again (Go), finds nobody on it.
    page.until(
        "(document.querySelector('#walk button').click(), \
         document.querySelectorAll('#walk-rows tbody tr').length)",
        json!(0),
        WAIT,
    )
    .await?;
    page.eval("document.querySelector('#reset').scrollIntoView()")
        .await?;
    shoot(&mut page, &stack, "reset").await?;
    // The archive paid by the table: r1's crown waits on r1's page, then shows claimed.
    let crown = format!("{lb}.reset-1");
    page.goto(&format!("{}/#/players/r1", stack.console))
        .await?;
    page.until_text("#rewards-open", "crown", WAIT).await?;
    let (status, claim) = stack
        .post_as(&format!("/me/rewards/{crown}/claim"), "r1", json!({}))
        .await?;
    anyhow::ensure!(status == 200, "{claim}");
    page.goto(&format!("{}/#/players/r2", stack.console))
        .await?;
    page.until_text("#rewards-open", "coin", WAIT).await?;
    page.goto(&format!("{}/#/players/r1", stack.console))
        .await?;
    page.until_text("#rewards-claimed", "by player", WAIT)
        .await?;
    page.eval("document.querySelector('#player-rewards').scrollIntoView()")
        .await?;
    shoot(&mut page, &stack, "rewards").await?;
    // The index empties as the stream brings it the tombstones.
    eventually(WAIT, "the board starts empty", || async {
        let (_, top) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
        Ok((top["entries"] == json!([])).then_some(()))
    })
    .await?;
    Ok(())
}

/// The figures of `game` the local CloudWatch stand-in (`POST {console}/monitoring`,
/// the Query protocol the console speaks) gives for the last hour: each metric's sum, as
/// the role `role` asks.
async fn hour_of(stack: &Stack, game: &str, role: &str) -> Result<(u16, Vec<f64>)> {
    let now = chrono::Utc::now();
    let iso = |t: chrono::DateTime<chrono::Utc>| t.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut form = vec![
        ("Action".to_owned(), "GetMetricData".to_owned()),
        ("Version".to_owned(), "2010-08-01".to_owned()),
        (
            "StartTime".to_owned(),
            iso(now - chrono::Duration::hours(1)),
        ),
        (
            "EndTime".to_owned(),
            iso(now + chrono::Duration::minutes(1)),
        ),
    ];
    for (i, name) in ["ResultsAccepted", "ResultsHeld", "Reads"]
        .iter()
        .enumerate()
    {
        let at = format!("MetricDataQueries.member.{}", i + 1);
        for (k, v) in [
            ("Id", format!("q{i}")),
            ("MetricStat.Metric.Namespace", "Leaderboard".to_owned()),
            ("MetricStat.Metric.MetricName", (*name).to_owned()),
            (
                "MetricStat.Metric.Dimensions.member.1.Name",
                "Game".to_owned(),
            ),
            (
                "MetricStat.Metric.Dimensions.member.1.Value",
                game.to_owned(),
            ),
            ("MetricStat.Period", "60".to_owned()),
            ("MetricStat.Stat", "Sum".to_owned()),
        ] {
            form.push((format!("{at}.{k}"), v));
        }
    }
    // Encoded as a form by hand: the suite's reqwest has no `form` feature.
    let mut encoded = reqwest::Url::parse("http://form.invalid/")?;
    encoded.query_pairs_mut().extend_pairs(&form);
    let resp = (stack.http.post(format!("{}/monitoring", stack.console)))
        .header("x-operator-role", role)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(encoded.query().unwrap_or_default().to_owned())
        .send()
        .await?;
    let status = resp.status().as_u16();
    let xml = resp.text().await?;
    // Each query's <Values> member list, in order: their sum.
    let sums = xml
        .split("<Values>")
        .skip(1)
        .map(|v| {
            let v = v.split("</Values>").next().unwrap_or_default();
            v.split("<member>")
                .skip(1)
                .filter_map(|m| m.split("</member>").next()?.parse::<f64>().ok())
                .sum()
        })
        .collect();
    Ok((status, sums))
}

#[tokio::test]
async fn the_overview_shows_a_games_hour_from_its_metrics_and_links_to_the_held_results()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let game = format!("ov{}", &unique("g").replace('-', "")[1..12]);
    let (status, body) = stack
        .post(
            "/families",
            json!({"game": game, "mode": "ranked", "policy": "BEST", "regions": ["EU"],
                   "periods": ["ALL_TIME"], "integrity": {"max_score": 1000}}),
        )
        .await?;
    assert_eq!(status, 201, "{body}");
    let result = |p: &str, m: &str, s: i64| {
        json!({"game": game, "mode": "ranked", "region": "EU", "player_id": p,
               "match_id": m, "score": s})
    };
    // Five honest matches, one retried (a replay counts nothing), one cheat held.
    let mut board = String::new();
    for i in 1..=5 {
        let (status, body) = stack
            .post("/scores", result(&format!("o{i}"), "m1", 100 * i))
            .await?;
        assert_eq!(status, 200, "{body}");
        board = body["results"][0]["leaderboard_id"]
            .as_str()
            .context("no board")?
            .to_owned();
    }
    let (status, body) = stack.post("/scores", result("o1", "m1", 100)).await?;
    assert_eq!(
        (status, &body["results"][0]["replayed"]),
        (200, &json!(true)),
        "{body}"
    );
    let (status, body) = stack.post("/scores", result("cheat", "m1", 50_000)).await?;
    assert_eq!(status, 202, "{body}");
    let top = format!("/admin/view/leaderboards/{board}/top?n=10");
    for _ in 0..3 {
        let (status, body) = stack.get(&top).await?;
        assert_eq!(status, 200, "{body}");
    }
    // A container writes its tallies at most every 10 s, at the end of an invocation:
    // one more match and one more read after that write every figure.
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    let (status, body) = stack.post("/scores", result("o6", "m1", 600)).await?;
    assert_eq!(status, 200, "{body}");
    let (status, body) = stack.get(&top).await?;
    assert_eq!(status, 200, "{body}");
    // Results 6 (matches, however many boards), held 1, reads 4.
    let want = vec![6.0, 1.0, 4.0];
    let mut figures = hour_of(&stack, &game, "operator").await?;
    for _ in 0..20 {
        if figures.1 == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
        figures = hour_of(&stack, &game, "operator").await?;
    }
    assert_eq!(figures, (200, want.clone()));
    assert_eq!(hour_of(&stack, &game, "support").await?, (200, want));
    let (status, _) = hour_of(&stack, &game, "nobody").await?;
    assert_eq!(
        status, 403,
        "a role whose policy does not allow GetMetricData"
    );

    // The page shows the same figures, and what needs attention links to the queue.
    let profile = stack.run_dir.join("chromium");
    let mut page = Browser::open(&format!("{}/#/overview/{game}", stack.console), &profile).await?;
    let figure =
        |tile: &str| format!("document.querySelector('#{tile} .figure')?.textContent ?? null");
    page.until(&figure("tile-results"), json!("6"), Duration::from_secs(20))
        .await?;
    page.until(&figure("tile-reads"), json!("4"), WAIT).await?;
    page.until(&figure("tile-held"), json!("1"), WAIT).await?;
    page.until(&figure("tile-errors"), json!("0 %"), WAIT)
        .await?;
    // The queue holds the cheat's match once, however many boards held it (GLOBAL and EU).
    page.until_text("#tile-held .note", "1 match waiting", WAIT)
        .await?;
    page.until_text(
        "#attention li[data-kind=review]",
        "1 held match waits for review",
        WAIT,
    )
    .await?;
    shoot(&mut page, &stack, "overview").await?;
    page.click("#attention li[data-kind=review] a").await?;
    page.until(&rows("#held", "player"), json!(["cheat"]), WAIT)
        .await?;
    // Support sees the same overview.
    page.fill("#role", "support").await?;
    page.goto(&format!("{}/#/overview/{game}", stack.console))
        .await?;
    page.until(&figure("tile-results"), json!("6"), WAIT)
        .await?;
    Ok(())
}
