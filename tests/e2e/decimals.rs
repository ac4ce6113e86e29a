//! Exact decimal scores (docs/decimals.md) over the local stack: what a client writes is
//! what every route answers, digit for digit, up to the ±(2^53-1) edge at each scale.
//! Bodies are sent and replies read as text, as a client's JSON library would see them,
//! so nothing here passes through a double.

use std::time::Duration;

use anyhow::{Context as _, Result};
use chrono::Utc;
use reqwest::Method;
use serde_json::{Value, json};

use leaderboard_rules::time::rfc3339_ms as rfc3339;

use crate::support::{Stack, Subscriber, drain, eventually, redis_url, subscribe, unique};

/// One scale of the test: a board's places, how it writes scores, the range's top at
/// that scale (2^53-1 scaled), a score the client writes with trailing zeros or an
/// exponent and how the board writes it back, and the points from that score to the top.
struct Scale {
    places: u8,
    format: &'static str,
    top: &'static str,
    one_over: &'static str,
    mid_written: &'static str,
    mid: &'static str,
    mid_to_top: &'static str,
    too_many: &'static str,
}

const SCALES: [Scale; 3] = [
    Scale {
        places: 1,
        format: "NUMBER",
        top: "900719925474099.1",
        one_over: "900719925474099.2",
        mid_written: "83.40",
        mid: "83.4",
        mid_to_top: "900719925474015.8",
        too_many: "83.45",
    },
    Scale {
        places: 3,
        format: "STRING",
        top: "9007199254740.991",
        one_over: "9007199254740.992",
        mid_written: "83.4170",
        mid: "83.417",
        mid_to_top: "9007199254657.575",
        too_many: "83.4171",
    },
    Scale {
        places: 6,
        format: "NUMBER",
        top: "9007199254.740991",
        one_over: "9007199254.740992",
        mid_written: "8.3417e1",
        mid: "83.417000",
        mid_to_top: "9007199171.323992",
        too_many: "83.4170001",
    },
];

impl Scale {
    /// `"score":…` as the board writes `text`.
    fn field(&self, name: &str, text: &str) -> String {
        match self.format {
            "STRING" => format!("\"{name}\":\"{text}\""),
            _ => format!("\"{name}\":{text}"),
        }
    }
}

/// Posts `new_score` written exactly as `score` (a number's literal, or a quoted string).
async fn submit(stack: &Stack, lb: &str, p: &str, m: &str, score: &str) -> Result<(u16, String)> {
    let body = format!(r#"{{"new_score": {score}, "match_id": "{m}"}}"#);
    let path = format!("/leaderboards/{lb}/players/{p}/score");
    stack.call_text(Method::POST, &path, Some(&body)).await
}

async fn get(stack: &Stack, path: &str) -> Result<String> {
    let (status, text) = stack.call_text(Method::GET, path, None).await?;
    anyhow::ensure!(status == 200, "GET {path}: {status} {text}");
    Ok(text)
}

fn code(text: &str) -> String {
    let v: Value = serde_json::from_str(text).unwrap_or_default();
    v["error"]["code"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn decimal_boards_take_and_answer_scores_exactly_on_every_route_at_the_range_edges()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    for s in &SCALES {
        let lb = unique(&format!("dec{}", s.places));
        let create = json!({"leaderboard_id": lb, "policy": "BEST",
                            "decimals": s.places, "score_format": s.format});
        let (status, board) = stack.post("/leaderboards", create.clone()).await?;
        assert_eq!(status, 201, "{board}");
        assert_eq!(
            (&board["decimals"], &board["score_format"]),
            (&json!(s.places), &json!(s.format))
        );
        // The same settings again find it; other places are another board's settings.
        assert_eq!(stack.post("/leaderboards", create.clone()).await?.0, 200);
        let mut other = create;
        other["decimals"] = json!(s.places - 1);
        assert_eq!(stack.post("/leaderboards", other).await?.0, 409);

        // The top as a number's literal, the bottom as a string, a middle score written
        // with trailing zeros or an exponent.
        let bottom = format!("-{}", s.top);
        for (p, written) in [
            ("hi", s.top.to_owned()),
            ("lo", format!("\"{bottom}\"")),
            ("mid", s.mid_written.to_owned()),
        ] {
            let (status, reply) = submit(&stack, &lb, p, "m1", &written).await?;
            assert_eq!(status, 200, "{p} {written}: {reply}");
            let shown = match p {
                "hi" => s.top,
                "lo" => &bottom,
                _ => s.mid,
            };
            assert!(reply.contains(&s.field("score", shown)), "{p}: {reply}");
        }

        // Refused, and nothing changes: one unit over the edge, more places than the
        // board keeps (never rounded), malformed text, not a number at all.
        for (written, status, want) in [
            (s.one_over.to_owned(), 422, "score_out_of_range"),
            (format!("\"-{}\"", s.one_over), 422, "score_out_of_range"),
            (s.too_many.to_owned(), 422, "too_many_decimals"),
            (format!("\"{}\"", s.too_many), 422, "too_many_decimals"),
            ("\"83,4\"".to_owned(), 400, "invalid_request"),
            ("true".to_owned(), 400, "invalid_request"),
        ] {
            let (got, reply) = submit(&stack, &lb, "new", "m9", &written).await?;
            assert_eq!(
                (got, code(&reply).as_str()),
                (status, want),
                "{written}: {reply}"
            );
            assert!(
                reply.contains("new_score"),
                "the error names the field: {reply}"
            );
        }
        // A retry is the same score however it is written; another score is a conflict.
        let (status, again) = submit(&stack, &lb, "mid", "m1", &format!("\"{}\"", s.mid)).await?;
        assert_eq!(status, 200, "{again}");
        assert!(again.contains("\"replayed\":true"), "{again}");
        let (status, other) = submit(&stack, &lb, "mid", "m1", "1").await?;
        assert_eq!(
            (status, code(&other).as_str()),
            (409, "idempotency_conflict")
        );

        // Every read writes the scores as the board does.
        let top = get(&stack, &format!("/leaderboards/{lb}/top?n=10")).await?;
        assert!(top.contains("\"total\":3"), "{top}");
        let order: Vec<usize> = [s.top, s.mid, bottom.as_str()]
            .iter()
            .map(|t| top.find(&s.field("score", t)).unwrap_or(usize::MAX))
            .collect();
        assert!(
            order.windows(2).all(|w| w[0] < w[1]) && order[2] < usize::MAX,
            "{top}"
        );
        let rank = get(&stack, &format!("/leaderboards/{lb}/players/mid/rank?k=1")).await?;
        for (name, text) in [("score", s.mid), ("points_to_next", s.mid_to_top)] {
            assert!(rank.contains(&s.field(name, text)), "{name}: {rank}");
        }
        let page = get(&stack, &format!("/leaderboards/{lb}/ranks?limit=3")).await?;
        assert!(
            page.contains(&s.field("score", s.top)) && page.contains(&s.field("score", &bottom)),
            "{page}"
        );
        let rows = get(
            &stack,
            &format!("/leaderboards/{lb}/entries?players=lo,mid"),
        )
        .await?;
        assert!(
            rows.contains(&s.field("score", &bottom)) && rows.contains(&s.field("score", s.mid)),
            "{rows}"
        );
        stack.set_friends("mid", &["hi", "lo"]).await?;
        let friends = get(
            &stack,
            &format!("/leaderboards/{lb}/players/mid/friends-rank?k=1"),
        )
        .await?;
        assert!(
            friends.contains(&s.field("score", s.mid))
                && friends.contains(&s.field("score", s.top)),
            "{friends}"
        );
        // The live top: read, then pushed when a new score enters it.
        let path = format!("/leaderboards/{lb}/live/top?n=3");
        let (status, view) = stack.call_text(Method::GET, &path, None).await?;
        assert_eq!(status, 200, "{view}");
        assert!(
            view.contains(&s.field("score", s.top)) && view.contains(&s.field("score", &bottom)),
            "{view}"
        );
        let channel: Value = serde_json::from_str(&view)?;
        let mut viewer = Subscriber::signed_in(&stack, "viewer").await?;
        viewer
            .subscribe(channel["channel"].as_str().context("channel")?)
            .await?
            .expect("a board's channel is open to players");
        let (status, reply) = submit(&stack, &lb, "new", "m1", s.mid_to_top).await?;
        assert_eq!(status, 200, "{reply}");
        let want = s.field("score", s.mid_to_top);
        let (push, _) = viewer
            .push_where(Duration::from_secs(10), |p| p.text.contains(&want))
            .await?;
        assert!(
            push.text.contains(&s.field("score", s.top)),
            "{}",
            push.text
        );
        // Taking a standing off answers the score it had, as the board writes it.
        let (status, removed) = stack
            .call_text(
                Method::DELETE,
                &format!("/leaderboards/{lb}/players/lo"),
                Some(r#"{"reason": "test"}"#),
            )
            .await?;
        assert_eq!(status, 200, "{removed}");
        assert!(
            removed.contains(&s.field("previous_score", &bottom)),
            "{removed}"
        );
    }
    Ok(())
}

/// A SUM season of 2 decimals written as strings: 0.1 + 0.2 is 0.30, exactly; the sum's
/// range is checked on the scaled total; once sealed, the results, the player's history
/// and the window-closed event write the scores as the board did.
#[tokio::test]
async fn a_decimal_sum_season_adds_exactly_and_its_results_history_and_event_keep_the_places()
-> Result<()> {
    let stack = Stack::start_with(&redis_url(), &[("SEAL_SETTLE_SECONDS", "1")]).await?;
    let (sqs, queue) = subscribe(&stack, "leaderboard.window.closed").await?;
    let game = {
        let u = unique("d");
        u[u.len().saturating_sub(30)..].replace('-', "_")
    };
    let now = Utc::now().timestamp_millis();
    let end = now + 15_000;
    let family = json!({"game": game, "mode": "m", "policy": "SUM", "regions": ["NA"],
        "periods": ["SEASON"], "grace_seconds": 0, "decimals": 2, "score_format": "STRING",
        "season": {"id": "s1", "start": rfc3339(now - 3_600_000), "end": rfc3339(end)}});
    let (status, body) = stack.post("/families", family).await?;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        (&body["decimals"], &body["score_format"]),
        (&json!(2), &json!("STRING"))
    );
    let global = format!("{game}:m:GLOBAL:SEASON:s1");
    let result = |p: &str, m: &str, score: &str| {
        format!(
            r#"{{"game": "{game}", "mode": "m", "region": "NA", "player_id": "{p}",
                 "match_id": "{m}", "score": {score}}}"#
        )
    };
    let post = async |p: &str, m: &str, score: &str| {
        stack
            .call_text(Method::POST, "/scores", Some(&result(p, m, score)))
            .await
    };
    for (p, m, score) in [
        ("ann", "m1", "0.1"),
        ("ann", "m2", "\"0.2\""),
        ("bob", "m1", "-0.05"),
        ("cy", "m1", "\"90071992547409.91\""),
    ] {
        let (status, reply) = post(p, m, score).await?;
        assert_eq!(status, 200, "{p} {m}: {reply}");
    }
    let (_, reply) = post("ann", "m3", "0").await?;
    assert!(reply.contains("\"score\":\"0.30\""), "{reply}");
    assert!(reply.contains("\"previous_score\":\"0.30\""), "{reply}");
    // One cent more than the top: each board refuses it, on the scaled total.
    let (status, reply) = post("cy", "m2", "0.01").await?;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply.matches("score_out_of_range").count(), 2, "{reply}");
    // Three places on boards of two: each board refuses it, as the fan-out refuses
    // per board.
    let (status, reply) = post("ann", "m4", "0.001").await?;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply.matches("\"too_many_decimals\"").count(), 2, "{reply}");
    let top = get(&stack, &format!("/leaderboards/{global}/top?n=10")).await?;
    for shown in ["\"90071992547409.91\"", "\"0.30\"", "\"-0.05\""] {
        assert!(
            top.contains(&format!("\"score\":{shown}")),
            "{shown}: {top}"
        );
    }

    let wait = (end + 1_500 - Utc::now().timestamp_millis()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let (status, body) = stack
        .post("/admin/seal", json!({"leaderboard_id": global}))
        .await?;
    assert!(status == 200 || status == 202, "{status} {body}");
    let results = eventually(Duration::from_secs(30), "sealed results", || async {
        let path = format!("/leaderboards/{global}/results");
        let (status, text) = stack.call_text(Method::GET, &path, None).await?;
        Ok((status == 200).then_some(text))
    })
    .await?;
    for shown in ["\"90071992547409.91\"", "\"0.30\"", "\"-0.05\""] {
        assert!(
            results.contains(&format!("\"score\":{shown}")),
            "{shown}: {results}"
        );
    }
    let history = get(
        &stack,
        &format!("/games/{game}/modes/m/players/ann/history"),
    )
    .await?;
    assert!(history.contains("\"score\":\"0.30\""), "{history}");
    let events = eventually(Duration::from_secs(30), "the window's event", || async {
        let events = drain(&sqs, &queue).await?;
        Ok(events
            .into_iter()
            .find(|e| e["detail"]["leaderboard_id"] == global.as_str()))
    })
    .await?;
    let scores: Vec<&Value> = events["detail"]["top"]
        .as_array()
        .context("top")?
        .iter()
        .map(|row| &row["score"])
        .collect();
    assert_eq!(
        scores,
        [&json!("90071992547409.91"), &json!("0.30"), &json!("-0.05")]
    );
    assert_eq!(
        events["detail"]["scores"],
        json!({"decimals": 2, "style": "STRING"})
    );
    Ok(())
}
