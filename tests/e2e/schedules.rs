//! A family's own schedules (docs/schedules.md): crons in a named time zone, across the
//! autumn DST change, over the local stack (every reply checked against openapi.yaml);
//! a cron window sealed like any window, its history read by the schedule's id; and the
//! schedules the service cannot run refused naming their field.

use std::time::{Duration, Instant};

use anyhow::Result;
use serde_json::{Value, json};

use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::seal::{self, HistoryRequest, SealSettings};
use leaderboard_rules::window::Period;

use crate::support::{Stack, TestEnv, redis_url, unique};

fn game() -> String {
    let u = unique("g");
    u[u.len().saturating_sub(30)..].to_owned()
}

/// The board a fan-out reply put the result on for `period` (GLOBAL scope).
fn board_of(reply: &Value, period: &str) -> String {
    let found = (reply["results"].as_array().into_iter().flatten())
        .find(|r| r["scope"] == "GLOBAL" && r["period"] == period);
    found
        .and_then(|r| r["leaderboard_id"].as_str())
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn a_stockholm_cron_turns_at_its_own_4am_through_the_dst_change_with_sortable_keys()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let g = game();
    let family = json!({
        "game": g, "mode": "m", "regions": ["EU"], "periods": ["ALL_TIME"],
        // A year of grace keeps October's windows open for the test.
        "grace_seconds": 31_536_000,
        "schedules": [
            {"id": "nightly", "cron": "0 4 * * *", "time_zone": "Europe/Stockholm"},
            {"id": "hourly", "cron": "0 * * * *", "time_zone": "Europe/Stockholm"},
            {"id": "last-24h", "rolling_seconds": 86400}
        ]
    });
    let (status, fam) = stack.post("/families", family.clone()).await?;
    assert_eq!(status, 201, "{fam}");
    assert_eq!(fam["schedules"][0]["id"], "hourly", "sorted by id");
    assert!(
        fam["current"]["GLOBAL"]["nightly"].as_str().is_some(),
        "{fam}"
    );
    assert_eq!(stack.post("/families", family).await?.0, 200);

    // Stockholm leaves summer time on 2026-10-25 at 03:00 CEST (01:00Z): 04:00 is 02:00Z
    // before and 03:00Z after.
    let mut seen = Vec::new();
    for (i, (ts, nightly_key, start, end)) in [
        (
            "2026-10-24T01:59:59Z",
            "20261023T0200Z",
            "2026-10-23T02:00:00.000Z",
            "2026-10-24T02:00:00.000Z",
        ),
        (
            "2026-10-24T02:00:00Z",
            "20261024T0200Z",
            "2026-10-24T02:00:00.000Z",
            "2026-10-25T03:00:00.000Z",
        ),
        (
            "2026-10-25T03:00:00Z",
            "20261025T0300Z",
            "2026-10-25T03:00:00.000Z",
            "2026-10-26T03:00:00.000Z",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let result = json!({"game": g, "mode": "m", "region": "EU", "player_id": format!("p{i}"),
                            "match_id": "m1", "score": 10 + i, "event_ts": ts});
        let (status, reply) = stack.post("/scores", result).await?;
        assert_eq!(status, 200, "{reply}");
        let lb = board_of(&reply, "nightly");
        assert_eq!(lb, format!("{g}:m:GLOBAL:nightly:{nightly_key}"), "{ts}");
        let (_, board) = stack.get(&format!("/leaderboards/{lb}")).await?;
        assert_eq!(
            (board["starts_at"].as_str(), board["ends_at"].as_str()),
            (Some(start), Some(end))
        );
        assert_eq!(
            (&board["period"], &board["window"]),
            (&json!("nightly"), &json!(nightly_key))
        );
        seen.push(nightly_key);
    }
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "keys sort as time");
    // The day the clocks go back lasts 25 hours.
    let (_, day) = stack
        .get(&format!(
            "/leaderboards/{g}:m:GLOBAL:nightly:20261024T0200Z"
        ))
        .await?;
    let len = |v: &Value| {
        let t = |f: &str| chrono::DateTime::parse_from_rfc3339(v[f].as_str().unwrap()).unwrap();
        (t("ends_at") - t("starts_at")).num_hours()
    };
    assert_eq!(len(&day), 25);

    // The repeated hour, 02:00-03:00 twice, is one hourly window of two hours: results in
    // its first and second pass land on the same board.
    let mut hourly = Vec::new();
    for (p, ts) in [
        ("early", "2026-10-25T00:30:00Z"),
        ("late", "2026-10-25T01:30:00Z"),
    ] {
        let result = json!({"game": g, "mode": "m", "region": "EU", "player_id": p,
                            "match_id": "h1", "score": 1, "event_ts": ts});
        hourly.push(board_of(&stack.post("/scores", result).await?.1, "hourly"));
    }
    assert_eq!(hourly[0], hourly[1]);
    assert_eq!(hourly[0], format!("{g}:m:GLOBAL:hourly:20261025T0000Z"));
    let (_, both) = stack
        .get(&format!("/leaderboards/{}/top", hourly[0]))
        .await?;
    assert_eq!(both["total"], 2);
    assert_eq!(
        len(&stack.get(&format!("/leaderboards/{}", hourly[0])).await?.1),
        2
    );

    // The rolling board takes the results of its last day, and is one board per scope.
    let result = json!({"game": g, "mode": "m", "region": "EU", "player_id": "now",
                        "match_id": "r1", "score": 3});
    let reply = stack.post("/scores", result).await?.1;
    let rolling = board_of(&reply, "last-24h");
    assert_eq!(rolling, format!("{g}:m:GLOBAL:last-24h"));
    let (_, board) = stack.get(&format!("/leaderboards/{rolling}")).await?;
    assert_eq!(
        (&board["rolling_seconds"], &board["period"]),
        (&json!(86400), &json!("last-24h"))
    );
    assert!(
        board["ends_at"].is_null(),
        "a rolling board never closes: {board}"
    );
    // October's results are out of its window; a correction would age out with it.
    let (_, top) = stack.get(&format!("/leaderboards/{rolling}/top")).await?;
    assert_eq!(top["total"], 1);
    let fix = json!({"new_score": 1, "match_id": "fix", "op": "set", "reason": "test"});
    let (status, e) = stack
        .post(&format!("/leaderboards/{rolling}/players/now/score"), fix)
        .await?;
    assert_eq!(
        (status, &e["error"]["code"]),
        (422, &json!("op_not_allowed"))
    );
    Ok(())
}

#[tokio::test]
async fn schedules_the_service_cannot_run_are_refused_naming_their_field() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let body = |schedules: Value| json!({"game": game(), "mode": "m", "periods": ["ALL_TIME"], "schedules": schedules});
    let cron = |c: &str, tz: &str| json!({"id": "s", "cron": c, "time_zone": tz});
    for (schedules, field) in [
        (json!([cron("0 4 * *", "UTC")]), "schedules[0].cron"),
        (json!([cron("0 0 4 * * *", "UTC")]), "schedules[0].cron"),
        (json!([cron("0 25 * * *", "UTC")]), "schedules[0].cron"),
        (json!([cron("*/10 * * * *", "UTC")]), "schedules[0].cron"),
        (
            json!([cron("0 4 * * *", "Europe/Atlantis")]),
            "schedules[0].time_zone",
        ),
        (
            json!([{"id": "f", "cron": "0 0 * * MON", "time_zone": "UTC", "every": 2}]),
            "schedules[0].anchor",
        ),
        (
            json!([{"id": "f", "cron": "0 0 * * MON", "time_zone": "UTC", "every": 2,
                 "anchor": "2026-01-06T00:00:00Z"}]),
            "schedules[0].anchor",
        ),
        (
            json!([{"id": "f", "cron": "0 * * * *", "time_zone": "UTC", "every": 2,
                 "anchor": "2026-01-06T00:00:00Z"}]),
            "schedules[0].every",
        ),
        (
            json!([{"id": "r", "rolling_seconds": 60}]),
            "schedules[0].rolling_seconds",
        ),
        (
            json!([{"id": "DAILY", "rolling_seconds": 3600}]),
            "schedules[0].id",
        ),
        (
            json!([cron("0 4 * * *", "UTC"), cron("0 5 * * *", "UTC")]),
            "schedules",
        ),
        // The second schedule's, named by its place in the request.
        (
            json!([{"id": "b", "cron": "0 4 * * *", "time_zone": "UTC"},
                   {"id": "a", "cron": "0 4 * *", "time_zone": "UTC"}]),
            "schedules[1].cron",
        ),
        (
            json!([{"id": "a", "cron": "0 4 * * *", "time_zone": "UTC", "zone": "UTC"}]),
            "schedules[0].zone",
        ),
    ] {
        let (status, e) = stack.post("/families", body(schedules.clone())).await?;
        assert_eq!(status, 400, "{schedules}: {e}");
        assert_eq!(e["error"]["field"], field, "{schedules}: {e}");
        let message = e["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{schedules}: {message}");
    }
    let mut own_in_periods = body(json!([cron("0 4 * * *", "UTC")]));
    own_in_periods["periods"] = json!(["ALL_TIME", "s"]);
    assert_eq!(stack.post("/families", own_in_periods).await?.0, 400);
    // A fortnight from a Monday anchor is fine.
    let fortnight = json!([{"id": "fortnight", "cron": "0 0 * * MON", "time_zone": "UTC",
                            "every": 2, "anchor": "2026-01-05T00:00:00Z"}]);
    let (status, fam) = stack.post("/families", body(fortnight)).await?;
    assert_eq!(status, 201, "{fam}");
    assert_eq!(fam["schedules"][0]["anchor"], "2026-01-05T00:00:00.000Z");
    Ok(())
}

/// A cron window closes like a built-in one: sealed once, its history read by the
/// schedule's id, its event naming the schedule as its period.
#[tokio::test]
async fn a_cron_window_is_sealed_and_its_history_is_read_by_the_schedules_id() -> Result<()> {
    let env = TestEnv::new().await;
    let g = game();
    let req: CreateFamily = serde_json::from_value(json!({
        "game": g, "mode": "m", "regions": ["EU"], "periods": ["ALL_TIME"], "grace_seconds": 0,
        "schedules": [{"id": "shift", "cron": "0 */8 * * *", "time_zone": "Asia/Kolkata"}]
    }))?;
    boards::create_family(&env.ctx.store, req).await?;
    // Play a result 20 hours ago, its window long closed now.
    let then = leaderboard_rules::time::now_ms() - 20 * 3_600_000;
    env.ctx.clock.set(Some(then));
    let fam = (g.clone(), "m".to_owned());
    let reply = env
        .submit_match(&fam, "EU", "ann", "m1", 7, Some(then))
        .await?;
    env.ctx.clock.set(None);
    let shift = reply
        .results
        .iter()
        .find(|r| r.period.schedule().is_some())
        .unwrap();
    let lb = shift.leaderboard_id.clone().unwrap();
    let events = MemoryEvents::default();
    let settled = SealSettings {
        settle: Duration::ZERO,
    };
    let report = seal::seal(
        &env.ctx.store,
        &events,
        settled,
        &lb,
        Instant::now() + Duration::from_secs(30),
    )
    .await?;
    assert!(report.done);
    let closed = events.published();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].window.period.as_str(), "shift");
    let history = seal::history(
        &env.ctx.store,
        HistoryRequest::parse(&g, "m", "ann", None, Some("shift"), None, None)?,
    )
    .await?;
    assert_eq!(history.windows.len(), 1);
    assert_eq!(history.windows[0].window.leaderboard_id, lb);
    assert_eq!(
        history.windows[0].window.period,
        Period::parse("period", "shift")?
    );
    Ok(())
}

/// `window.opened` and `window.closing` go out once per window, however many sweeps run
/// at once (real DynamoDB: the markers' conditional claims), and the next window's turn
/// once it comes.
#[tokio::test]
async fn each_windows_turns_are_published_once_by_racing_sweeps() -> Result<()> {
    let env = TestEnv::new().await;
    let g = game();
    let req: CreateFamily = serde_json::from_value(json!({
        "game": g, "mode": "m", "regions": ["EU"], "periods": ["ALL_TIME", "DAILY"],
        "grace_seconds": 0, "closing_lead_seconds": 3600,
        "schedules": [{"id": "hourly", "cron": "0 * * * *", "time_zone": "Asia/Kathmandu"}]
    }))?;
    boards::create_family(&env.ctx.store, req).await?;
    let events = MemoryEvents::default();
    // 12:10Z: Kathmandu is UTC+5:45, so its hour runs from 11:15Z to 12:15Z.
    let noon = leaderboard_rules::time::parse_ts("t", &json!("2026-11-27T12:10:00Z"))?;
    let store = &env.ctx.store;
    let sweeps = (0..8).map(|_| seal::announce_turns(store, &events, noon));
    futures::future::try_join_all(sweeps).await?;
    seal::announce_turns(store, &events, noon).await?;
    let mine = |events: &MemoryEvents| -> Vec<String> {
        let mut ids: Vec<String> = (events.turns().into_iter())
            .filter(|t| t.game == g)
            .map(|t| t.turn_id)
            .collect();
        ids.sort();
        ids
    };
    let day = format!("{g}:m:DAILY:2026-11-27");
    let hour = format!("{g}:m:hourly:20261127T1115Z");
    assert_eq!(
        mine(&events),
        [
            format!("{day}:opened"),
            format!("{hour}:closing"),
            format!("{hour}:opened")
        ],
        "each once; the day is not near its end"
    );
    let turn = (events.turns().into_iter())
        .find(|t| t.turn_id == format!("{hour}:opened"))
        .unwrap();
    assert_eq!(
        turn.boards["EU"].as_str(),
        format!("{g}:m:EU:hourly:20261127T1115Z")
    );
    assert_eq!(turn.end - turn.start, 3_600_000);
    // The next hour's turns, once more each.
    let later = noon + 3_600_000;
    let sweeps = (0..4).map(|_| seal::announce_turns(store, &events, later));
    futures::future::try_join_all(sweeps).await?;
    let next = format!("{g}:m:hourly:20261127T1215Z");
    let ids = mine(&events);
    assert_eq!(ids.len(), 5, "{ids:?}");
    assert!(ids.contains(&format!("{next}:opened")) && ids.contains(&format!("{next}:closing")));
    Ok(())
}

/// Over the stack, with its sweep running every second: a subscriber's queue gets each
/// turn of the current window once, through many sweeps.
#[tokio::test]
async fn over_the_stack_a_window_announces_its_opening_and_closing_once_on_the_bus() -> Result<()> {
    use crate::support::{StackOptions, drain, subscribe};
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            schedule_every: Some(1.0),
            ..Default::default()
        },
    )
    .await?;
    let (sqs, opened) = subscribe(&stack, "leaderboard.window.opened").await?;
    let (_, closing) = subscribe(&stack, "leaderboard.window.closing").await?;
    let (_, started) = subscribe(&stack, "leaderboard.tournament.started").await?;
    let g = game();
    let family = json!({"game": g, "mode": "m", "regions": ["EU"], "periods": ["ALL_TIME"],
        "grace_seconds": 0, "closing_lead_seconds": 3600,
        "schedules": [{"id": "hourly", "cron": "30 * * * *", "time_zone": "UTC"}]});
    let (status, fam) = stack.post("/families", family).await?;
    assert_eq!(
        (status, &fam["closing_lead_seconds"]),
        (201, &json!(3600)),
        "{fam}"
    );
    // A daily tournament of the game: the same sweeps announce its running occurrence.
    let t = json!({"tournament_id": g, "game": g, "mode": "m", "title": "Daily",
        "schedule": {"period": "DAILY"}});
    let (status, body) = stack.post("/tournaments", t).await?;
    assert_eq!(status, 201, "{body}");
    tokio::time::sleep(Duration::from_secs(5)).await;
    let announced = drain(&sqs, &started).await?;
    assert!(
        announced
            .iter()
            .any(|e| e["detail"]["tournament_id"] == json!(g)),
        "{announced:?}"
    );
    for (queue, kind) in [(&opened, "opened"), (&closing, "closing")] {
        let got = drain(&sqs, queue).await?;
        let mine: Vec<&Value> = got
            .iter()
            .filter(|e| e["detail"]["game"] == json!(g))
            .collect();
        assert!(!mine.is_empty(), "{kind}: {got:?}");
        let mut ids: Vec<&str> = mine
            .iter()
            .filter_map(|e| e["detail"]["turn_id"].as_str())
            .collect();
        let all = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), all, "{kind} published once each: {ids:?}");
        let d = &mine[0]["detail"];
        assert_eq!((&d["turn"], &d["period"]), (&json!(kind), &json!("hourly")));
        assert!(
            d["boards"]["GLOBAL"]
                .as_str()
                .unwrap_or_default()
                .starts_with(&format!("{g}:m:GLOBAL:hourly:"))
        );
    }
    Ok(())
}
