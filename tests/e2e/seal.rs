//! Period end over HTTP on the local stack: a window closes, the schedule (every second
//! here) and several concurrent `POST /admin/seal` calls race to seal it, and exactly one
//! `leaderboard.window.closed` per board reaches a rule's queue on the stack's event bus;
//! the results and every player's history match the final standings; an erasure
//! unnames the player in the results and deletes their history. And a board bigger
//! than a page sealed over several runs against DynamoDB, every rank right.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use chrono::{SecondsFormat, Utc};
use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::seal::{self, PAGE, SealOutcome, SealSettings};
use leaderboard_core::store::{BoardStore, HistoryQuery, RankedReads, SealStore};
use leaderboard_rules::board::{Board, BoardStatus, BoardWindow, Policy};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction};
use leaderboard_rules::window::{Period, TimeWindow};
use reqwest::Method;
use serde_json::json;

use crate::support::{
    Stack, StackOptions, TestEnv, drain, eventually, redis_url, subscribe, unique,
};

fn rfc3339(ms: i64) -> String {
    chrono::DateTime::<Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[tokio::test]
async fn a_closed_window_is_sealed_once_under_racing_runs_and_history_matches_the_standings()
-> Result<()> {
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            env: &[("SEAL_SETTLE_SECONDS", "1")],
            schedule_every: Some(1.0),
            workers: Some(3),
            ..Default::default()
        },
    )
    .await?;
    let (sqs, queue) = subscribe(&stack, "leaderboard.window.closed").await?;
    let game = {
        let u = unique("s");
        u[u.len().saturating_sub(30)..].to_owned()
    };
    let now = Utc::now().timestamp_millis();
    let end = now + 12_000;
    let family = json!({"game": game, "mode": "ranked", "policy": "BEST", "regions": ["NA", "EU"],
        "periods": ["SEASON"], "grace_seconds": 0,
        "season": {"id": "s1", "start": rfc3339(now - 3_600_000), "end": rfc3339(end)}});
    let (status, body) = stack.post("/families", family).await?;
    assert_eq!(status, 201, "{body}");
    let global = format!("{game}:ranked:GLOBAL:SEASON:s1");
    let na = format!("{game}:ranked:NA:SEASON:s1");
    let eu = format!("{game}:ranked:EU:SEASON:s1");

    // 14 players, some improving, in NA or EU; the model is each player's best.
    let mut best: BTreeMap<String, (i64, String)> = BTreeMap::new();
    for i in 0..14_i64 {
        let p = format!("p{i:02}");
        let region = if i % 3 == 0 { "EU" } else { "NA" };
        for (m, score) in [("m1", (i * 37) % 50), ("m2", (i * 53) % 61)] {
            let result = json!({"game": game, "mode": "ranked", "region": region,
                                "player_id": p, "match_id": m, "score": score});
            let (status, reply) = stack.post("/scores", result).await?;
            assert_eq!(status, 200, "{reply}");
            let e = best.entry(p.clone()).or_insert((i64::MIN, region.into()));
            e.0 = e.0.max(score);
        }
    }
    // A removed entry is no participant.
    let (status, body) = stack
        .call(
            Method::DELETE,
            &format!("/leaderboards/{global}/players/p05"),
            Some(json!({"reason": "cheat"})),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    // Before the window closes: nothing sealed, and a seal is refused.
    let (status, body) = stack
        .get(&format!("/leaderboards/{global}/results"))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_sealed"))
    );
    let (status, body) = stack
        .post("/admin/seal", json!({"leaderboard_id": global}))
        .await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("not_sealable")),
        "{body}"
    );
    // The final standings, as the live board serves them before it closes.
    let (status, live) = stack
        .get(&format!("/leaderboards/{global}/top?n=100"))
        .await?;
    assert_eq!(status, 200, "{live}");
    let standings = crate::support::scores(&live, "entries");
    assert_eq!(standings.len(), 13);
    let (_, na_live) = stack.get(&format!("/leaderboards/{na}/top?n=100")).await?;
    let na_players = crate::support::players(&na_live, "entries");
    assert!(na_players.iter().all(|p| best[p].1 == "NA") && na_players.contains(&"p05".to_owned()));
    assert!(standings.iter().all(|(p, s)| p != "p05" && best[p].0 == *s));

    // After the close and the settle time: concurrent calls race the schedule.
    let wait = (end + 1_000 - Utc::now().timestamp_millis()).max(0) as u64;
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let racing = (0..4).map(|i| {
        let stack = &stack;
        let global = global.clone();
        async move {
            let body = if i % 2 == 0 {
                json!({})
            } else {
                json!({"leaderboard_id": global})
            };
            stack.post("/admin/seal", body).await
        }
    });
    for outcome in futures::future::join_all(racing).await {
        let (status, body) = outcome?;
        assert!(status == 200 || status == 202, "{status} {body}");
    }
    let results = eventually(Duration::from_secs(20), "sealed results", || async {
        let (status, body) = stack
            .get(&format!("/leaderboards/{global}/results"))
            .await?;
        Ok((status == 200).then_some(body))
    })
    .await?;
    for lb in [&na, &eu] {
        eventually(
            Duration::from_secs(20),
            "the regional boards sealed",
            || async {
                let (status, _) = stack.get(&format!("/leaderboards/{lb}/results")).await?;
                Ok((status == 200).then_some(()))
            },
        )
        .await?;
    }
    // Several more schedule runs and another explicit call change nothing.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let (status, again) = stack
        .post("/admin/seal", json!({"leaderboard_id": global}))
        .await?;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["boards"][0]["outcome"], "already_sealed");
    let events = drain(&sqs, &queue).await?;
    let mut sealed: Vec<&str> = events
        .iter()
        .map(|e| e["detail"]["leaderboard_id"].as_str().unwrap_or(""))
        .collect();
    sealed.sort_unstable();
    let mut expected = vec![global.as_str(), na.as_str(), eu.as_str()];
    expected.sort_unstable();
    assert_eq!(sealed, expected, "one event per window: {events:#?}");
    let event = events
        .iter()
        .find(|e| e["detail"]["leaderboard_id"] == global.as_str())
        .context("the global event")?;
    assert_eq!(event["detail-type"], "leaderboard.window.closed");
    assert_eq!(event["detail"]["seal_id"], global.as_str());
    assert_eq!(event["detail"]["total"], 13);

    // The results and the event's top are the final standings.
    assert_eq!(results["total"], 13);
    let sealed_top: Vec<(String, i64)> = results["entries"]
        .as_array()
        .context("entries")?
        .iter()
        .map(|e| {
            (
                e["player_id"].as_str().unwrap_or("").to_owned(),
                e["score"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(sealed_top, standings);
    let event_top: Vec<&str> = event["detail"]["top"]
        .as_array()
        .context("top")?
        .iter()
        .map(|e| e["player_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        event_top,
        standings
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
    );
    let (_, board) = stack.get(&format!("/leaderboards/{global}")).await?;
    assert!(board["sealed_at"].is_string(), "{board}");

    // Every participant's history: their final rank and score, on GLOBAL and in NA.
    for (i, (p, score)) in standings.iter().enumerate() {
        let (status, h) = stack
            .get(&format!(
                "/games/{game}/modes/ranked/players/{p}/history?period=SEASON"
            ))
            .await?;
        assert_eq!(status, 200, "{h}");
        let w = &h["windows"][0];
        assert_eq!(
            (w["rank"].as_u64(), w["score"].as_i64()),
            (Some(i as u64 + 1), Some(*score)),
            "{p}: {h}"
        );
        assert_eq!(w["leaderboard_id"], global.as_str());
        let (_, regional) = stack
            .get(&format!(
                "/games/{game}/modes/ranked/players/{p}/history?scope=NA"
            ))
            .await?;
        match na_players.iter().position(|q| q == p) {
            Some(r) => assert_eq!(
                regional["windows"][0]["rank"].as_u64(),
                Some(r as u64 + 1),
                "{p}"
            ),
            None => assert_eq!(regional["windows"], json!([]), "{p} played in EU"),
        }
    }
    let (status, h) = stack
        .get(&format!("/games/{game}/modes/ranked/players/p05/history"))
        .await?;
    assert_eq!(
        (status, h["windows"].clone()),
        (200, json!([])),
        "removed: no place"
    );
    let (status, bad) = stack
        .get(&format!(
            "/games/{game}/modes/ranked/players/p01/history?period=HOURLY"
        ))
        .await?;
    assert_eq!(
        (status, bad["error"]["code"].as_str()),
        (400, Some("invalid_request"))
    );
    // An ALL_TIME board's windows are its resets' archives: none here.
    let (status, all_time) = stack
        .get(&format!(
            "/games/{game}/modes/ranked/players/p01/history?period=ALL_TIME"
        ))
        .await?;
    assert_eq!((status, all_time["windows"].clone()), (200, json!([])));

    // Erased: unnamed in the results (the place stays), no history.
    let winner = standings[0].0.clone();
    let (status, body) = stack
        .call(
            Method::DELETE,
            &format!("/players/{winner}"),
            Some(json!({"reason": "gdpr"})),
        )
        .await?;
    assert_eq!(status, 200, "{body}");
    let (_, results) = stack
        .get(&format!("/leaderboards/{global}/results"))
        .await?;
    assert_eq!(results["entries"][0]["rank"], 1);
    assert!(
        results["entries"][0].get("player_id").is_none(),
        "{results}"
    );
    let (_, h) = stack
        .get(&format!(
            "/games/{game}/modes/ranked/players/{winner}/history"
        ))
        .await?;
    assert_eq!(h["windows"], json!([]));
    assert!(
        drain(&sqs, &queue).await?.is_empty(),
        "nothing published again"
    );
    Ok(())
}

/// A closed WEEKLY board of its own game, written straight into the env's table, that
/// keeps its rank order in DynamoDB or not.
pub(crate) async fn closed_window(env: &TestEnv, rank_index: bool) -> Result<Board> {
    let game = {
        let u = unique("w");
        u[u.len().saturating_sub(30)..].to_owned()
    };
    let end = Utc::now().timestamp_millis() - 3_600_000;
    let board = Board {
        tournament: None,
        leaderboard_id: LeaderboardId::parse(&format!("{game}:m:GLOBAL:WEEKLY:2026-W01"))?,
        policy: Policy::Best,
        status: BoardStatus::Active,
        created_at: end - 7 * 86_400_000,
        window: Some(BoardWindow {
            rolling_ms: None,
            game,
            mode: "m".into(),
            scope: "GLOBAL".into(),
            window: TimeWindow {
                period: Period::Weekly,
                key: Some("2026-W01".into()),
                start: Some(end - 7 * 86_400_000),
                end: Some(end),
            },
            grace_ms: 0,
        }),
        sealed_at: None,
        dense_ranks: true,
        rank_index,
        scores: Default::default(),
        integrity: None,
        reset: None,
        rewards: None,
    };
    env.ctx.store.create_board(&board).await?;
    Ok(board)
}

#[tokio::test]
async fn a_big_window_seals_over_several_runs_from_dynamodb_with_every_rank_right() -> Result<()> {
    seals_over_several_runs(true).await
}

/// The same window on a board without a rank order in DynamoDB (a family's DAILY by
/// default): each run reads the rows and sorts them, and every rank comes out the same
/// as the rank order the seeded rows also carry.
#[tokio::test]
async fn a_big_window_without_a_rank_order_seals_from_its_sorted_rows_with_every_rank_right()
-> Result<()> {
    seals_over_several_runs(false).await
}

async fn seals_over_several_runs(rank_index: bool) -> Result<()> {
    let env = TestEnv::new().await;
    let board = closed_window(&env, rank_index).await?;
    let lb = &board.leaderboard_id;
    let n = 2 * PAGE + 500;
    env.seed_standings(lb, n as u64).await?;
    let store = &env.ctx.store;
    let events = MemoryEvents::default();
    let settled = SealSettings {
        settle: Duration::ZERO,
    };
    // No time at all per run: each records one page of 1,000 and stops, as a run at its
    // deadline does; the next goes on from the saved place.
    let started = Instant::now();
    let mut outcomes = Vec::new();
    loop {
        let report = seal::seal(store, &events, settled, lb, Instant::now()).await?;
        outcomes.push(report.boards[0].outcome);
        if report.done {
            break;
        }
    }
    let took = started.elapsed();
    assert_eq!(
        outcomes,
        [
            SealOutcome::InProgress,
            SealOutcome::InProgress,
            SealOutcome::Sealed
        ]
    );
    eprintln!(
        "sealed {n} participants in {} runs, {:.1} s: {:.0} rows/s on the local endpoint",
        outcomes.len(),
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    let published = events.published();
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].total, n as u64);
    let truth = store
        .ranked_after(BoardOrder::new(lb, Direction::Desc), None, 10_000)
        .await?;
    assert_eq!(truth.len(), n);
    let results = store.get_results(lb).await?.context("results")?;
    let top: Vec<&str> = results
        .top
        .iter()
        .filter_map(|p| p.player_id.as_ref().map(|p| p.as_str()))
        .collect();
    let expected: Vec<&str> = truth[..1_000].iter().map(|k| k.player.as_str()).collect();
    assert_eq!(top, expected);
    // Ranks on both sides of each run's stop are continuous.
    let w = board.window.as_ref().context("window")?;
    for i in [
        0,
        1,
        PAGE - 1,
        PAGE,
        PAGE + 1,
        2 * PAGE - 1,
        2 * PAGE,
        n - 1,
    ] {
        let key = &truth[i];
        let player = PlayerId::parse(&key.player)?;
        let rows = store
            .history(&HistoryQuery {
                player: &player,
                game: &w.game,
                mode: &w.mode,
                scope: &w.scope,
                period: Period::Weekly,
                end_at_most: None,
                limit: 5,
            })
            .await?;
        assert_eq!(rows.len(), 1, "{}", key.player);
        assert_eq!(
            (rows[0].rank, rows[0].score),
            (i as u64 + 1, key.score.get())
        );
    }
    // Sealed: another run finds it so and publishes nothing.
    let again = seal::seal(store, &events, settled, lb, Instant::now()).await?;
    assert_eq!(again.boards[0].outcome, SealOutcome::AlreadySealed);
    assert_eq!(events.published().len(), 1);
    Ok(())
}
