//! Exports over the local stack: a board's standings written to the stack's bucket (the
//! S3 stand-in) in several parts, read back through the presigned link and compared with
//! a walk of the board; results that race the export are left out and counted, never
//! written twice; a sealed window exports as its sealed results; audited, operators only.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::Result;
use chrono::Utc;
use futures::future::try_join_all;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{Stack, StackOptions, redis_url, unique};

/// Parts of 16 KiB: a board of a few hundred players is written in several.
const PART_BYTES: &str = "16384";

/// One line of an export.
#[derive(Debug, Clone, PartialEq)]
struct Line {
    rank: u64,
    player: String,
    name: String,
    score: String,
    reached_at: String,
    metadata: Option<Value>,
}

/// Asks for an export of `lb` (202 asserted), waits until it is done, and reads the file
/// through its link, as an operator's browser would: no credentials.
async fn export(stack: &Stack, lb: &str, reason: &str) -> Result<(Value, Vec<Line>)> {
    let path = format!("/leaderboards/{lb}/exports");
    let (status, asked) = stack.post(&path, json!({ "reason": reason })).await?;
    anyhow::ensure!(status == 202, "{status} {asked}");
    assert_eq!(asked["status"], "RUNNING", "{asked}");
    let id = asked["export_id"].as_str().unwrap().to_owned();
    let done = wait_done(stack, lb, &id).await?;
    let url = done["url"].as_str().unwrap();
    let file = reqwest::get(url).await?;
    anyhow::ensure!(file.status() == 200, "GET {url}: {}", file.status());
    let kind = file.headers().get("content-type").cloned();
    let bytes = file.bytes().await?;
    assert_eq!(done["bytes"].as_u64(), Some(bytes.len() as u64), "{done}");
    assert!(
        kind.is_some_and(|k| k.to_str().unwrap_or_default().starts_with("text/csv")),
        "the file is served as CSV"
    );
    Ok((done, parse(&bytes)?))
}

async fn wait_done(stack: &Stack, lb: &str, id: &str) -> Result<Value> {
    let path = format!("/leaderboards/{lb}/exports/{id}");
    for _ in 0..600 {
        let (status, view) = stack.get(&path).await?;
        anyhow::ensure!(status == 200, "{status} {view}");
        if view["status"] == "DONE" {
            return Ok(view);
        }
        anyhow::ensure!(view.get("url").is_none(), "a link before the file: {view}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    anyhow::bail!("export {id} of {lb} not done in 60 s")
}

fn parse(bytes: &[u8]) -> Result<Vec<Line>> {
    let mut reader = csv::Reader::from_reader(bytes);
    let header: Vec<String> = reader.headers()?.iter().map(str::to_owned).collect();
    assert_eq!(
        header,
        [
            "rank",
            "player_id",
            "display_name",
            "score",
            "reached_at",
            "metadata"
        ]
    );
    let mut lines = Vec::new();
    for record in reader.records() {
        let r = record?;
        lines.push(Line {
            rank: r[0].parse()?,
            player: r[1].to_owned(),
            name: r[2].to_owned(),
            score: r[3].to_owned(),
            reached_at: r[4].to_owned(),
            metadata: (!r[5].is_empty())
                .then(|| serde_json::from_str(&r[5]))
                .transpose()?,
        });
    }
    Ok(lines)
}

/// The board as a walk of `GET /leaderboards/{lb}/ranks` reads it, as lines.
async fn walked(stack: &Stack, lb: &str) -> Result<Vec<Line>> {
    let (mut lines, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let at = cursor.map_or(String::new(), |c| format!("&cursor={c}"));
        let (status, page) = stack
            .get(&format!("/leaderboards/{lb}/ranks?limit=100{at}"))
            .await?;
        anyhow::ensure!(status == 200, "{page}");
        for e in page["entries"].as_array().unwrap() {
            lines.push(Line {
                rank: e["rank"].as_u64().unwrap(),
                player: e["player_id"].as_str().unwrap().to_owned(),
                name: e["display_name"].as_str().unwrap_or_default().to_owned(),
                score: e["score"].to_string(),
                reached_at: e["updated_at"].as_str().unwrap().to_owned(),
                metadata: Some(e["metadata"].clone()).filter(|m| !m.is_null()),
            });
        }
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return Ok(lines);
        }
    }
}

/// The names players give themselves, some a spreadsheet would trip on.
fn name_of(i: usize) -> Option<String> {
    match i % 7 {
        0 => None,
        1 => Some(format!("Ada, \"the\" {i}")),
        2 => Some(format!("=HYPERLINK(\"x\",\"{i}\")")),
        3 => Some(format!("Zoë {i}")),
        _ => Some(format!("player {i}")),
    }
}

#[tokio::test]
async fn a_board_exports_whole_in_parts_and_racing_results_are_left_out_once() -> Result<()> {
    let stack = Stack::start_with(&redis_url(), &[("EXPORT_PART_BYTES", PART_BYTES)]).await?;
    let lb = stack.create_board("exp").await?;
    let players: Vec<String> = (0..360).map(|i| format!("p{i:03}")).collect();
    for chunk in players.chunks(24).enumerate() {
        let (c, chunk) = chunk;
        try_join_all(chunk.iter().enumerate().map(|(j, p)| {
            let (stack, lb, i) = (&stack, &lb, c * 24 + j);
            async move {
                if let Some(name) = name_of(i) {
                    let body = json!({ "display_name": name });
                    let path = format!("/players/{p}/profile");
                    let (status, reply) = stack.call(Method::PUT, &path, Some(body)).await?;
                    anyhow::ensure!(status == 200, "{reply}");
                }
                let mut result = json!({"new_score": (i * 7919) % 1000, "match_id": "m1"});
                if i % 3 == 0 {
                    result["metadata"] =
                        json!({"map": "dust, 2", "kills": i, "note": "a \"quote\""});
                }
                let path = format!("/leaderboards/{lb}/players/{p}/score");
                let (status, reply) = stack.post(&path, result).await?;
                anyhow::ensure!(status == 200, "{reply}");
                Ok(())
            }
        }))
        .await?;
    }
    let before = walked(&stack, &lb).await?;
    assert_eq!(before.len(), 360);

    // A quiet board: the file is the walk, line for line.
    let (done, lines) = export(&stack, &lb, "weekly prizes").await?;
    assert_eq!(
        (done["rows"].as_u64(), done["moved"].as_u64()),
        (Some(360), Some(0))
    );
    assert!(
        done["bytes"].as_u64().unwrap() > 16_384,
        "at least two parts: {done}"
    );
    for (line, want) in lines.iter().zip(&before) {
        let mut want = want.clone();
        if want.name.starts_with('=') {
            want.name.insert(0, '\''); // never run as a formula
        }
        assert_eq!(line, &want);
    }
    assert_eq!(lines.len(), before.len());

    // Results that race an export: every standing reached after it began is left out
    // and counted when the walk meets it; nobody is written twice, and everyone else is
    // written as they stood.
    let path = format!("/leaderboards/{lb}/exports");
    let (status, asked) = stack.post(&path, json!({"reason": "race"})).await?;
    assert_eq!(status, 202, "{asked}");
    let movers: Vec<&String> = players.iter().step_by(9).collect();
    try_join_all(movers.iter().map(|p| {
        let (stack, lb) = (&stack, &lb);
        async move {
            let path = format!("/leaderboards/{lb}/players/{p}/score");
            let (status, reply) = stack
                .post(&path, json!({"new_score": 5000, "match_id": "m2"}))
                .await?;
            anyhow::ensure!(status == 200, "{reply}");
            Ok(())
        }
    }))
    .await?;
    let id = asked["export_id"].as_str().unwrap();
    let raced = wait_done(&stack, &lb, id).await?;
    let url = raced["url"].as_str().unwrap();
    let lines = parse(&reqwest::get(url).await?.bytes().await?)?;
    let was: BTreeMap<&str, &Line> = before.iter().map(|l| (l.player.as_str(), l)).collect();
    let mut seen = BTreeSet::new();
    for (line, rank) in lines.iter().zip(1..) {
        assert_eq!(line.rank, rank, "ranks count from 1 without a gap");
        assert!(seen.insert(line.player.clone()), "{} twice", line.player);
        let then = was[line.player.as_str()];
        assert_eq!(
            (&line.score, &line.reached_at),
            (&then.score, &then.reached_at)
        );
    }
    let moved: BTreeSet<String> = movers.iter().map(|p| (*p).clone()).collect();
    for p in &players {
        assert!(
            seen.contains(p) || moved.contains(p),
            "{p} did not move and is missing"
        );
    }
    let left_out = players.len() - lines.len();
    assert_eq!(raced["rows"].as_u64(), Some(lines.len() as u64));
    assert!(
        raced["moved"].as_u64().unwrap() as usize <= left_out && left_out <= movers.len(),
        "{raced}"
    );

    // Listed newest first; audited with the reason; operators only; bad asks refused.
    let (_, listed) = stack.get(&path).await?;
    let ids: Vec<&str> = (listed["exports"].as_array().unwrap().iter())
        .map(|e| e["export_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id, done["export_id"].as_str().unwrap()]);
    let (_, audit) = stack.get("/admin/audit?limit=50").await?;
    let records = audit["records"].as_array().unwrap();
    let record = records.iter().find(|r| r["id"] == id).expect("audited");
    assert_eq!(
        (&record["action"], &record["reason"]),
        (&json!("export"), &json!("race"))
    );
    let (status, body) = stack.post(&path, json!({})).await?;
    assert_eq!((status, &body["error"]["field"]), (400, &json!("reason")));
    let (status, _) = stack
        .post(
            "/leaderboards/no-such-board/exports",
            json!({"reason": "x"}),
        )
        .await?;
    assert_eq!(status, 404);
    let (status, body) = stack.get(&format!("{path}/nope")).await?;
    assert_eq!(
        (status, &body["error"]["code"]),
        (404, &json!("export_not_found"))
    );
    let (status, _) = stack
        .post_as(&path, "p001", json!({"reason": "mine"}))
        .await?;
    assert!(
        status == 401 || status == 403,
        "a player asked for an export: {status}"
    );
    Ok(())
}

#[tokio::test]
async fn a_sealed_window_exports_as_its_sealed_results() -> Result<()> {
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            env: &[
                ("SEAL_SETTLE_SECONDS", "1"),
                ("EXPORT_PART_BYTES", PART_BYTES),
            ],
            ..Default::default()
        },
    )
    .await?;
    let game = {
        let u = unique("xs");
        u[u.len().saturating_sub(30)..].to_owned()
    };
    let now = Utc::now().timestamp_millis();
    let end = now + 8_000;
    let at = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    };
    let family = json!({"game": game, "mode": "ranked", "policy": "BEST", "periods": ["SEASON"], "regions": ["NA"],
        "grace_seconds": 0, "season": {"id": "s1", "start": at(now - 3_600_000), "end": at(end)}});
    let (status, body) = stack.post("/families", family).await?;
    assert_eq!(status, 201, "{body}");
    let lb = format!("{game}:ranked:GLOBAL:SEASON:s1");
    try_join_all((0..40_i64).map(|i| {
        let (stack, game) = (&stack, &game);
        async move {
            let result = json!({"game": game, "mode": "ranked", "region": "NA", "player_id": format!("s{i:02}"),
                "match_id": "m1", "score": (i * 13) % 17, "metadata": {"i": i}});
            let (status, reply) = stack.post("/scores", result).await?;
            anyhow::ensure!(status == 200, "{reply}");
            Ok(())
        }
    }))
    .await?;
    let wait = (end + 1_500 - Utc::now().timestamp_millis()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    stack.seal_all().await?;
    let (status, results) = stack.get(&format!("/leaderboards/{lb}/results")).await?;
    assert_eq!(status, 200, "{results}");
    let (done, lines) = export(&stack, &lb, "season prizes").await?;
    assert_eq!(done["rows"].as_u64(), results["total"].as_u64());
    let sealed = results["entries"].as_array().unwrap();
    assert_eq!(lines.len(), sealed.len());
    for (line, place) in lines.iter().zip(sealed) {
        assert_eq!(line.rank, place["rank"].as_u64().unwrap());
        assert_eq!(line.player, place["player_id"].as_str().unwrap());
        assert_eq!(line.score, place["score"].to_string());
        assert_eq!(line.reached_at, place["reached_at"].as_str().unwrap());
        assert_eq!(line.metadata.as_ref(), Some(&place["metadata"]));
    }
    Ok(())
}
