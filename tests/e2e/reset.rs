//! A board reset now over the local stack, on a single node and on a cluster: a family's
//! boards reset while every player keeps sending results. Each player's results add
//! 2^k, one after another (a refused one sent again until taken), so a standing's bits
//! name the results it holds: every result is counted once, on exactly one side of the
//! reset, the archive holds a prefix of each player's results and the board the rest.
//! The archive's results, history and event, and the emptied board's reads and live
//! view, are checked against that model; two resets asked at once make one.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};
use futures::future::try_join_all;
use serde_json::{Value, json};

use crate::support::{Stack, StackOptions, Subscriber, drain, eventually, subscribe, unique};

/// Players in the race.
const PLAYERS: usize = 12;
/// Results each sends before the reset is asked for (2^0 .. 2^3).
const BEFORE: u32 = 4;

/// Sends result `k` of player `p` (2^k) until the family's boards take it: a 503
/// `board_resetting` is waited out as its `Retry-After` says.
async fn send(stack: &Stack, game: &str, p: &str, k: u32) -> Result<()> {
    let body = json!({"game": game, "mode": "duo", "region": "EU", "player_id": p,
                      "match_id": format!("{p}-{k}"), "score": 1_i64 << k});
    for _ in 0..200 {
        let (status, reply) = stack.post("/scores", body.clone()).await?;
        match status {
            200 => return Ok(()),
            503 if reply["error"]["code"] == "board_resetting" => {
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            _ => bail!("{p} result {k}: {status} {reply}"),
        }
    }
    bail!("{p} result {k} never taken")
}

/// The board's standings, best first, as a walk of `GET /leaderboards/{lb}/ranks`.
async fn walked(stack: &Stack, lb: &str) -> Result<Vec<(String, i64)>> {
    let (mut rows, mut cursor) = (Vec::new(), None::<String>);
    loop {
        let at = cursor.map_or(String::new(), |c| format!("&cursor={c}"));
        let (status, page) = (stack.get(&format!("/leaderboards/{lb}/ranks?limit=5{at}"))).await?;
        ensure!(status == 200, "{page}");
        for e in page["entries"].as_array().context("entries")? {
            rows.push((
                e["player_id"].as_str().unwrap_or_default().to_owned(),
                e["score"].as_i64().unwrap_or_default(),
            ));
        }
        cursor = page["next_cursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            return Ok(rows);
        }
    }
}

/// Waits until the board's latest reset is done.
async fn until_done(stack: &Stack, lb: &str) -> Result<()> {
    eventually(Duration::from_secs(60), "the reset is done", || async {
        let (_, board) = stack.get(&format!("/leaderboards/{lb}")).await?;
        Ok((board["reset"]["status"] == "DONE").then_some(()))
    })
    .await
}

/// Asks `path` with `body` and checks its refusal: the status, and the error's `code`
/// (or `field`) as named.
async fn refused(
    stack: &Stack,
    path: &str,
    body: Value,
    (status, key, want): (u16, &str, &str),
) -> Result<()> {
    let (got, reply) = stack.post(path, body).await?;
    ensure!(
        got == status && reply["error"][key] == want,
        "{path}: {got} {reply}"
    );
    Ok(())
}

/// `(player, score)` pairs of a reply's `entries`.
fn pairs(view: &Value) -> Vec<(String, i64)> {
    (view["entries"].as_array().into_iter().flatten())
        .map(|e| {
            let p = e["player_id"].as_str().unwrap_or_default().to_owned();
            (p, e["score"].as_i64().unwrap_or_default())
        })
        .collect()
}

/// The asker's own score in a rank reply (the neighbour marked `self`).
fn own_score(rank: &Value) -> Option<i64> {
    (rank["neighbors"].as_array().into_iter().flatten())
        .find(|n| n["self"] == true)
        .and_then(|n| n["score"].as_i64())
}

/// Best first (equal scores in the board's own order: who reached it first).
fn best_first(rows: &[(String, i64)]) -> bool {
    rows.windows(2).all(|w| w[0].1 >= w[1].1)
}

async fn a_familys_reset_under_racing_results_lands_each_result_on_one_side(
    redis_url: &str,
) -> Result<()> {
    let opts = StackOptions {
        env: &[("SEAL_SETTLE_SECONDS", "1"), ("READ_CACHE_TTL_MS", "0")],
        ..Default::default()
    };
    let stack = Stack::launch(redis_url, opts).await?;
    let game = {
        let u = unique("rs");
        u[u.len().saturating_sub(28)..].replace('-', "_")
    };
    let family = json!({"game": game, "mode": "duo", "policy": "SUM", "regions": ["EU"],
                        "periods": ["ALL_TIME"]});
    let (status, body) = stack.post("/families", family).await?;
    ensure!(status == 201, "{body}");
    let boards = [
        format!("{game}:duo:GLOBAL:ALL_TIME"),
        format!("{game}:duo:EU:ALL_TIME"),
    ];
    let players: Vec<String> = (0..PLAYERS).map(|i| format!("p{i:02}")).collect();
    for k in 0..BEFORE {
        try_join_all(players.iter().map(|p| send(&stack, &game, p, k))).await?;
    }
    let (sqs, queue) = subscribe(&stack, "leaderboard.window.closed").await?;
    let (_, resets) = subscribe(&stack, "leaderboard.board.reset").await?;
    let global = &boards[0];
    // A live view of the global top 5, watched through the reset.
    let mut viewer = Subscriber::signed_in(&stack, "viewer").await?;
    let top5 = format!("/leaderboards/{global}/live/top?n=5");
    let (status, _, snap) = stack.get_as(&top5, "viewer").await?;
    ensure!(status == 200, "{snap}");
    let channel = snap["channel"].as_str().context("channel")?;
    viewer.subscribe(channel).await?.expect("a board's channel");

    // Every player keeps sending, one result after another, until the reset is done
    // and two more of theirs were taken after it.
    let done = Arc::new(AtomicBool::new(false));
    let writers = try_join_all(players.iter().map(|p| {
        let (stack, game, done) = (&stack, &game, done.clone());
        async move {
            let (mut k, mut after) = (BEFORE, 0);
            while after < 2 {
                ensure!(k < 48, "{p}: the reset never finished");
                let was_done = done.load(Ordering::SeqCst);
                send(stack, game, p, k).await?;
                after += u32::from(was_done);
                k += 1;
                tokio::time::sleep(Duration::from_millis(150)).await;
            }
            Ok::<u32, anyhow::Error>(k)
        }
    }));
    let operator = async {
        tokio::time::sleep(Duration::from_millis(400)).await;
        // Two asked at once: one reset each board, answered alike.
        let own = format!("/leaderboards/{global}/reset");
        let path = format!("/families/{game}/duo/reset");
        let (a, b) = tokio::join!(
            stack.post(&path, json!({"reason": "exploit"})),
            stack.post(&own, json!({"reason": "again"})),
        );
        let ((sa, a), (sb, b)) = (a?, b?);
        ensure!(sa == 202 && sb == 202, "{a} {b}");
        let resets = a["resets"].as_array().context("resets")?;
        ensure!(resets.len() == 2, "both boards: {a}");
        let mine = resets
            .iter()
            .find(|r| r["leaderboard_id"] == global.as_str());
        ensure!(
            mine.is_some_and(|r| r["reset"] == b["reset"] && r["reset"] == 1),
            "{a} {b}"
        );
        for lb in &boards {
            until_done(&stack, lb).await?;
        }
        done.store(true, Ordering::SeqCst);
        Ok(b)
    };
    let (sent, asked) = tokio::try_join!(writers, operator)?;
    let sent: BTreeMap<&String, u32> = players.iter().zip(sent).collect();

    for lb in &boards {
        let archive = format!("{lb}.reset-1");
        // The model: the archive holds a prefix of each player's results, the board
        // the rest, and together every result once.
        let (status, results) = stack
            .get(&format!("/leaderboards/{archive}/results"))
            .await?;
        ensure!(status == 200, "{results}");
        ensure!(results["total"] == PLAYERS, "{results}");
        ensure!(results["window"] == "reset-1", "{results}");
        let archived: BTreeMap<String, i64> = pairs(&results).into_iter().collect();
        let now = eventually(Duration::from_secs(20), "the board's reads", || async {
            let rows = walked(&stack, lb).await?;
            Ok((rows.len() == PLAYERS).then_some(rows))
        })
        .await?;
        let current: BTreeMap<String, i64> = now.iter().cloned().collect();
        for p in &players {
            let (a, n, all) = (archived[p], current[p], (1_i64 << sent[p]) - 1);
            ensure!(
                a & n == 0 && a | n == all,
                "{lb} {p}: {a:b} + {n:b} != {all:b}"
            );
            ensure!(
                a & (a + 1) == 0 && a >= (1 << BEFORE) - 1,
                "{lb} {p}: {a:b}"
            );
            ensure!(n > 0, "{lb} {p} sent after the reset");
        }
        ensure!(best_first(&pairs(&results)), "best first: {results}");
        ensure!(best_first(&now), "best first: {now:?}");
        // Every read of the board agrees with the model.
        let (_, top) = stack.get(&format!("/leaderboards/{lb}/top?n=50")).await?;
        ensure!(top["total"] == PLAYERS && pairs(&top) == now, "{top}");
        for (i, (p, score)) in now.iter().enumerate() {
            let (status, rank) = stack
                .get(&format!("/leaderboards/{lb}/players/{p}/rank"))
                .await?;
            ensure!(
                status == 200 && own_score(&rank) == Some(*score),
                "{p}: {rank}"
            );
            ensure!(
                rank["global_rank"]
                    .as_u64()
                    .is_some_and(|r| r <= i as u64 + 1),
                "{p}: {rank}"
            );
        }
        // A retry of an archived result is answered as it was, and adds nothing.
        let body = json!({"game": game, "mode": "duo", "region": "EU", "player_id": "p00",
                          "match_id": "p00-0", "score": 1});
        let (status, again) = stack.post("/scores", body).await?;
        ensure!(status == 200, "{again}");
        let (_, rank) = stack
            .get(&format!("/leaderboards/{lb}/players/p00/rank"))
            .await?;
        ensure!(own_score(&rank) == Some(current["p00"]), "{rank}");
    }
    // History: the archive's rank and score of each player.
    let (_, results) = stack
        .get(&format!("/leaderboards/{global}.reset-1/results"))
        .await?;
    for e in results["entries"].as_array().context("entries")? {
        let p = e["player_id"].as_str().unwrap_or_default();
        let path =
            format!("/games/{game}/modes/duo/players/{p}/history?period=ALL_TIME&scope=GLOBAL");
        let (status, h) = stack.get(&path).await?;
        ensure!(status == 200, "{h}");
        let w = &h["windows"][0];
        ensure!(w["leaderboard_id"] == format!("{global}.reset-1"), "{h}");
        ensure!(
            (w["rank"] == e["rank"]) && (w["score"] == e["score"]),
            "{h} {e}"
        );
    }
    // One window-closed event per archive.
    let events = eventually(Duration::from_secs(20), "the events", || async {
        let events = drain(&sqs, &queue).await?;
        Ok((!events.is_empty()).then_some(events))
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut ids: Vec<String> = (events.iter().chain(&drain(&sqs, &queue).await?))
        .map(|e| {
            e["detail"]["seal_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    ids.sort();
    let mut want: Vec<String> = boards.iter().map(|b| format!("{b}.reset-1")).collect();
    want.sort();
    ensure!(ids == want, "{ids:?}");
    // And one `board.reset` per board, naming its archive (the reset is done by now).
    let mut done: Vec<String> = (drain(&sqs, &resets).await?.iter())
        .map(|e| {
            e["detail"]["archive_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    done.sort();
    ensure!(done == want, "{done:?}");
    // The live view was pushed the reset: its last push is the new top 5.
    let top: Vec<(String, i64)> = walked(&stack, global).await?.into_iter().take(5).collect();
    viewer
        .push_where(Duration::from_secs(10), |p| p.rows() == top)
        .await
        .context("the live view after the reset")?;
    // Audited once per board; the asker of the board's own reset was answered the
    // family's; a second reset of the board archives what came after the first.
    let (_, audit) = stack.get("/admin/audit?limit=50").await?;
    let audited = (audit["records"].as_array().into_iter().flatten())
        .filter(|r| r["action"] == "reset")
        .count();
    ensure!(audited == 2, "{audit}");
    ensure!(
        asked["archive_id"] == format!("{global}.reset-1"),
        "{asked}"
    );
    let (status, second) = (stack.post(
        &format!("/leaderboards/{global}/reset"),
        json!({"reason": "r"}),
    ))
    .await?;
    ensure!(status == 202 && second["reset"] == 2, "{second}");
    ensure!(second["since"] == asked["fence_at"], "{second} {asked}");
    Ok(())
}

crate::on_both_topologies!(a_familys_reset_under_racing_results_lands_each_result_on_one_side);

#[tokio::test]
async fn a_reset_refuses_a_bad_ask_a_closed_window_and_a_player() -> Result<()> {
    let stack = Stack::start(&crate::support::redis_url()).await?;
    let lb = stack.create_board("rsr").await?;
    let path = format!("/leaderboards/{lb}/reset");
    let r = || json!({"reason": "r"});
    refused(&stack, &path, json!({}), (400, "field", "reason")).await?;
    let unknown = "/leaderboards/no-such/reset";
    refused(&stack, unknown, r(), (404, "code", "board_not_found")).await?;
    let closed = json!({"status": "CLOSED", "reason": "season over"});
    let (status, body) = stack
        .call(
            reqwest::Method::PATCH,
            &format!("/leaderboards/{lb}"),
            Some(closed),
        )
        .await?;
    ensure!(status == 200, "{body}");
    refused(&stack, &path, r(), (409, "code", "not_resettable")).await?;
    let family = "/families/nogame/duo/reset";
    refused(&stack, family, r(), (404, "code", "family_not_found")).await?;
    // A player's credentials cannot reset a board.
    let (status, _) = stack
        .post_as(&path, "mallory", json!({"reason": "r"}))
        .await?;
    ensure!(
        status == 401 || status == 403,
        "a player reset a board: {status}"
    );
    // No board may take an archive's id.
    let create = json!({"leaderboard_id": format!("{lb}.reset-1"), "policy": "BEST"});
    refused(
        &stack,
        "/leaderboards",
        create,
        (400, "field", "leaderboard_id"),
    )
    .await
}

/// A reset while Redis hangs (SIGSTOP): the reset needs DynamoDB alone, so it finishes;
/// reads answer from DynamoDB meanwhile, the emptied board with the result that came
/// after it; once Redis answers, the stream's projector brings the index to the same.
#[tokio::test]
async fn a_reset_while_redis_hangs_finishes_and_the_index_follows_once_it_answers() -> Result<()> {
    let mut redis = crate::support::OwnRedis::reserve();
    redis.start().await?;
    let opts = StackOptions {
        env: &[("SEAL_SETTLE_SECONDS", "1"), ("READ_CACHE_TTL_MS", "0")],
        ..Default::default()
    };
    let stack = Stack::launch(&redis.url(), opts).await?;
    let lb = stack.create_board("rsh").await?;
    for i in 0..20 {
        stack
            .post_score(&lb, &format!("h{i:02}"), "m1", 100 + i)
            .await?;
    }
    redis.pause();
    let path = format!("/leaderboards/{lb}/reset");
    let (status, asked) = stack.post(&path, json!({"reason": "exploit"})).await?;
    ensure!(status == 202, "{asked}");
    until_done(&stack, &lb).await?;
    let after = stack.post_score(&lb, "late", "m2", 7).await?;
    ensure!(
        after["rank"].is_null(),
        "no rank while Redis hangs: {after}"
    );
    let want = vec![("late".to_owned(), 7)];
    eventually(Duration::from_secs(20), "DynamoDB's answer", || async {
        let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=50")).await?;
        Ok((status == 200 && top["source"] == "dynamodb" && pairs(&top) == want).then_some(()))
    })
    .await?;
    redis.resume();
    eventually(Duration::from_secs(20), "the index follows", || async {
        let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=50")).await?;
        Ok((status == 200 && top["source"] == "redis" && pairs(&top) == want).then_some(()))
    })
    .await?;
    let (status, archive) = stack
        .get(&format!("/leaderboards/{lb}.reset-1/results"))
        .await?;
    ensure!(status == 200 && archive["total"] == 20, "{archive}");
    ensure!(archive["entries"][0]["player_id"] == "h19", "{archive}");
    Ok(())
}
