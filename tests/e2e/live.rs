//! Live views over the whole local stack: writes go in over HTTP (or straight into the
//! table, for a write rate the HTTP shim cannot carry), the table's stream drives the
//! live function, which publishes to the local events API, and a real WebSocket client
//! subscribed with a player's token gets the pushes.

use std::time::{Duration, Instant};

use anyhow::Result;
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use leaderboard::adapters::dynamodb::StandingItem;
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::Direction;
use leaderboard_rules::score::Score;
use serde_json::Value;

use crate::support::*;

/// A snapshot read as `player` (with their token).
async fn snapshot(stack: &Stack, path: &str, player: &str) -> Result<(u16, Value)> {
    let (status, _, body) = stack.get_as(path, player).await?;
    Ok((status, body))
}

fn percentile(mut ms: Vec<u128>, p: f64) -> u128 {
    ms.sort_unstable();
    ms[((ms.len() as f64 * p).ceil() as usize).clamp(1, ms.len()) - 1]
}

#[tokio::test]
async fn the_top_ten_is_pushed_within_a_second_never_for_writes_below_it_and_a_reconnect_resumes_without_gap()
-> Result<()> {
    let (stack, lb) = Stack::with_board("live-top").await?;
    for i in 0..30 {
        stack
            .post_score(&lb, &format!("p{i:02}"), "m", 1_000 + i)
            .await?;
    }
    let path = format!("/leaderboards/{lb}/live/top?n=10");
    let mut a = Subscriber::signed_in(&stack, "viewer-a").await?;
    let (status, snap) = snapshot(&stack, &path, "viewer-a").await?;
    assert_eq!(status, 200, "{snap}");
    let channel = snap["channel"].as_str().unwrap().to_owned();
    a.subscribe(&channel)
        .await?
        .expect("a board's channel is open to players");
    let (_, snap) = snapshot(&stack, &path, "viewer-a").await?;
    let mut held = (snap["version"].as_u64().unwrap(), rows(&snap));
    assert_eq!(held.1.len(), 10);
    assert_eq!(held.1[0], ("p29".to_owned(), 1_029));

    // 50 writes, each putting a new player on top: each push within 1 s (p95), each
    // following on from the one before.
    let mut latencies = Vec::new();
    for i in 0..50 {
        let player = format!("rise{i:02}");
        let sent = Instant::now();
        stack.post_score(&lb, &player, "m", 2_000 + i).await?;
        let want = (player.clone(), 2_000 + i);
        let (push, before) = a
            .push_where(Duration::from_secs(5), |p| p.rows().first() == Some(&want))
            .await?;
        latencies.push(push.at.duration_since(sent).as_millis());
        for p in before.iter().chain([&push]) {
            // A client skips what its read already held (a push sent while it read).
            if p.version() <= held.0 {
                continue;
            }
            assert_eq!(p.previous(), held.0, "a gap before {}", p.push);
            held = (p.version(), p.rows());
        }
        assert_eq!(push.rows().len(), 10);
        tokio::time::sleep(Duration::from_millis(100 + (i as u64 * 37) % 400)).await;
    }
    let p95 = percentile(latencies.clone(), 0.95);
    println!(
        "live top-10 push after a write: p50 {} ms, p95 {p95} ms, max {} ms over {} writes",
        percentile(latencies.clone(), 0.5),
        latencies.iter().max().unwrap(),
        latencies.len()
    );
    assert!(p95 <= 1_000, "p95 {p95} ms: {latencies:?}");

    // Writes below the view push nothing.
    for i in 0..20 {
        stack.post_score(&lb, &format!("low{i:02}"), "m", i).await?;
    }
    assert!(
        a.next_push(Duration::from_millis(1_500)).await?.is_none(),
        "a push for writes below the top 10"
    );

    // A second viewer drops its connection; writes go on; it reconnects: subscribe, then
    // read, and what follows comes on from its read with no gap and nothing twice.
    let mut b = Subscriber::signed_in(&stack, "viewer-b").await?;
    b.subscribe(&channel).await?.unwrap();
    drop(b);
    for i in 0..3 {
        stack
            .post_score(&lb, &format!("gone{i}"), "m", 3_000 + i)
            .await?;
        let want = format!("gone{i}");
        let (push, _) = a
            .push_where(Duration::from_secs(5), |p| p.rows()[0].0 == want)
            .await?;
        held = (push.version(), push.rows());
    }
    let mut b = Subscriber::signed_in(&stack, "viewer-b").await?;
    b.subscribe(&channel).await?.unwrap();
    let (_, snap) = snapshot(&stack, &path, "viewer-b").await?;
    let mut b_held = (snap["version"].as_u64().unwrap(), rows(&snap));
    assert_eq!(b_held, held, "the read after reconnecting is the view now");
    for i in 0..3 {
        stack
            .post_score(&lb, &format!("back{i}"), "m", 4_000 + i)
            .await?;
        let want = format!("back{i}");
        let (pa, _) = a
            .push_where(Duration::from_secs(5), |p| p.rows()[0].0 == want)
            .await?;
        let pb = b
            .next_push(Duration::from_secs(5))
            .await?
            .expect("the reconnected viewer gets the push");
        assert_eq!(pb.previous(), b_held.0, "no gap after the reconnect");
        assert_eq!((pb.version(), pb.rows()), (pa.version(), pa.rows()));
        b_held = (pb.version(), pb.rows());
    }
    assert!(
        b.next_push(Duration::from_millis(800)).await?.is_none(),
        "nothing twice"
    );
    Ok(())
}

/// `count` new players straight into the stack's table, 25 per BatchWriteItem, each
/// scoring above every earlier one (so each changes the top).
async fn write_standings(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    lb: &LeaderboardId,
    from: i64,
    count: i64,
) -> Result<()> {
    let mut batch = Vec::new();
    for i in from..from + count {
        let standing = Standing {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            metadata: None,
            score: Score::new("score", 10_000 + i)?,
            reached_at: leaderboard_rules::time::now_ms(),
            version: 1,
            last_match_id: MatchId::parse("m")?,
        };
        let player = PlayerId::parse(&format!("burst{i:05}"))?;
        let item = StandingItem::new(lb, &player, Direction::Desc, &standing, None);
        let put = PutRequest::builder()
            .set_item(Some(serde_dynamo::to_item(item)?))
            .build()?;
        batch.push(WriteRequest::builder().put_request(put).build());
    }
    for chunk in batch.chunks(25) {
        client
            .batch_write_item()
            .request_items(table, chunk.to_vec())
            .send()
            .await?;
    }
    Ok(())
}

#[tokio::test]
async fn under_two_hundred_writes_a_second_a_view_is_pushed_at_most_twice_a_second() -> Result<()> {
    // Its own DynamoDB endpoint: the shared one serves every test beside this one, one
    // request at a time, and 200 writes/s must not depend on what else runs.
    let dynamo = OwnDynamo::start_new().await?;
    let opts = StackOptions {
        dynamodb_url: Some(dynamo.url()),
        ..Default::default()
    };
    let stack = Stack::launch(&redis_url(), opts).await?;
    let lb = stack.create_board("live-rate").await?;
    stack.post_score(&lb, "seed", "m", 1).await?;
    let path = format!("/leaderboards/{lb}/live/top?n=10");
    let mut sub = Subscriber::signed_in(&stack, "viewer").await?;
    let (_, snap) = snapshot(&stack, &path, "viewer").await?;
    sub.subscribe(snap["channel"].as_str().unwrap())
        .await?
        .unwrap();

    let client = dynamodb_client_at(&dynamo.url()).await;
    let board = LeaderboardId::parse(&lb)?;
    let started = Instant::now();
    let (seconds, per_tick) = (6, 20);
    let ticks = seconds * 10;
    let written = ticks * per_tick;
    // Each tick's batch goes out on its schedule (every 100 ms), not after the one before
    // it returned.
    let writer = async {
        futures::future::try_join_all((0..ticks).map(|t| {
            let (client, board, table) = (&client, &board, &stack.table);
            async move {
                let at = started + Duration::from_millis(100 * t as u64);
                tokio::time::sleep_until(at.into()).await;
                write_standings(client, table, board, t * per_tick, per_tick).await
            }
        }))
        .await?;
        Ok::<_, anyhow::Error>(Instant::now())
    };
    let reader = async {
        let mut pushes = Vec::new();
        let until = Instant::now() + Duration::from_secs(seconds as u64 + 3);
        while let Some(p) = sub
            .next_push(until.saturating_duration_since(Instant::now()))
            .await?
        {
            pushes.push(p);
        }
        Ok::<_, anyhow::Error>(pushes)
    };
    let (done, pushes) = futures::try_join!(writer, reader)?;
    let rate = written as f64 / done.duration_since(started).as_secs_f64();
    let versions: Vec<u64> = pushes.iter().map(Received::version).collect();
    let gaps: Vec<u64> = versions.windows(2).map(|w| w[1] - w[0]).collect();
    println!(
        "{written} writes at {rate:.0}/s: {} pushes, gaps between them {:?} ms",
        pushes.len(),
        gaps
    );
    assert!(rate >= 190.0, "the writer reached only {rate:.0} writes/s");
    for w in versions.windows(3) {
        assert!(w[2] - w[0] >= 950, "three pushes within a second: {w:?}");
    }
    assert!(
        pushes.len() >= seconds as usize,
        "changes were coalesced away rather than pushed: {} pushes",
        pushes.len()
    );
    let last = pushes.last().unwrap();
    let top = format!("burst{:05}", ticks * per_tick - 1);
    assert_eq!(last.rows()[0].0, top, "the last push shows the last write");
    Ok(())
}

#[tokio::test]
async fn a_neighbourhood_is_its_players_alone_and_tells_them_who_overtook_them() -> Result<()> {
    let (stack, lb) = Stack::with_board("live-near").await?;
    for i in 0..15 {
        stack
            .post_score(&lb, &format!("top{i:02}"), "m", 1_000 + i)
            .await?;
    }
    stack.post_score(&lb, "me", "m", 500).await?;
    stack.post_score(&lb, "chaser", "m", 400).await?;
    let path = format!("/leaderboards/{lb}/players/me/live?k=2");

    // Hostile or mistaken asks change nothing and say why.
    let (status, body) = snapshot(&stack, &path, "eve").await?;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("not_your_view"))
    );
    for (bad, code) in [
        (format!("/leaderboards/{lb}/players/me/live?k=11"), 400),
        (format!("/leaderboards/{lb}/live/top?n=101"), 400),
        (format!("/leaderboards/{lb}/live/top?n=0"), 400),
        ("/leaderboards/no-such-board/live/top?n=10".to_owned(), 404),
    ] {
        let (status, body) = snapshot(&stack, &bad, "me").await?;
        assert_eq!(status, code, "{bad}: {body}");
    }
    match Subscriber::connect(&stack, None).await? {
        Connected::Refused(errors) => assert_eq!(errors[0]["errorType"], "UnauthorizedException"),
        Connected::Ok(_) => panic!("a connection without a token was accepted"),
    }
    match Subscriber::connect(&stack, Some("not.a.token")).await? {
        Connected::Refused(_) => {}
        Connected::Ok(_) => panic!("a forged token was accepted"),
    }

    let (status, snap) = snapshot(&stack, &path, "me").await?;
    assert_eq!(status, 200, "{snap}");
    let channel = snap["channel"].as_str().unwrap().to_owned();
    assert_eq!(channel, "/players/me");
    assert_eq!(
        (snap["rank"].as_u64(), snap["score"].as_i64()),
        (Some(16), Some(500))
    );
    let mut eve = Subscriber::signed_in(&stack, "eve").await?;
    let refused = eve
        .subscribe(&channel)
        .await?
        .expect_err("eve subscribed to me's channel");
    assert_eq!(refused[0]["errorType"], "UnauthorizedException");
    let mut me = Subscriber::signed_in(&stack, "me").await?;
    me.subscribe(&channel)
        .await?
        .expect("a player's own channel");

    // Overtaken: chaser jumps from below to above.
    stack.post_score(&lb, "chaser", "m2", 600).await?;
    let (push, _) = me
        .push_where(Duration::from_secs(3), |p| p.push["rank"] == 17)
        .await?;
    assert_eq!(push.push["view"], "near");
    let notices = push.push["notices"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        notices,
        vec![
            serde_json::json!({"type": "overtaken", "by": ["chaser"], "rank_before": 16, "rank": 17})
        ],
        "{}",
        push.push
    );
    let around: Vec<String> = push.rows().into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        around,
        ["top00", "chaser", "me"],
        "ranks 15..17, nobody below"
    );

    // Entering the top 10 (and the top) is told too.
    stack.post_score(&lb, "me", "m2", 5_000).await?;
    let (push, _) = me
        .push_where(Duration::from_secs(3), |p| p.push["rank"] == 1)
        .await?;
    let notices = push.push["notices"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        notices,
        vec![
            serde_json::json!({"type": "entered_top", "top": 10}),
            serde_json::json!({"type": "entered_top", "top": 1})
        ]
    );
    // Eve's own writes far below change nothing of me's view.
    stack.post_score(&lb, "eve", "m", 1).await?;
    assert!(me.next_push(Duration::from_millis(1_500)).await?.is_none());
    Ok(())
}

#[tokio::test]
async fn rows_carry_names_and_a_rename_in_a_watched_top_is_pushed_with_the_next_push() -> Result<()>
{
    let (stack, lb) = Stack::with_board("live-names").await?;
    for (p, s) in [("ada", 300), ("bob", 200), ("cy", 100)] {
        stack.post_score(&lb, p, "m", s).await?;
    }
    let profile = |p: &str, body: Value| {
        let stack = &stack;
        let path = format!("/players/{p}/profile");
        async move {
            let (status, reply) = stack.call(reqwest::Method::PUT, &path, Some(body)).await?;
            anyhow::ensure!(status == 200, "{path}: {reply}");
            Ok::<_, anyhow::Error>(())
        }
    };
    profile(
        "ada",
        serde_json::json!({"display_name": "Ada", "country": "GB"}),
    )
    .await?;
    let named = |view: &Value| -> Vec<(String, Value)> {
        view["entries"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                (
                    e["player_id"].as_str().unwrap_or("").to_owned(),
                    e["display_name"].clone(),
                )
            })
            .collect()
    };
    let path = format!("/leaderboards/{lb}/live/top?n=2");
    let mut viewer = Subscriber::signed_in(&stack, "viewer").await?;
    let (_, snap) = snapshot(&stack, &path, "viewer").await?;
    viewer
        .subscribe(snap["channel"].as_str().unwrap())
        .await?
        .expect("a board's channel");
    let (status, snap) = snapshot(&stack, &path, "viewer").await?;
    assert_eq!(status, 200, "{snap}");
    let null = Value::Null;
    assert_eq!(
        named(&snap),
        [("ada".into(), "Ada".into()), ("bob".into(), null.clone())],
        "{snap}"
    );
    assert_eq!(snap["entries"][0]["country"], "GB");
    // A neighbourhood's rows are named too.
    let (_, near) = snapshot(
        &stack,
        &format!("/leaderboards/{lb}/players/cy/live?k=1"),
        "cy",
    )
    .await?;
    assert_eq!(named(&near)[0], ("bob".into(), null.clone()), "{near}");

    // bob, in the watched top 2, names himself: the view is pushed, following on from
    // the snapshot, with the new name and nothing else changed.
    profile("bob", serde_json::json!({"display_name": "Bobby"})).await?;
    let (push, _) = viewer
        .push_where(Duration::from_secs(5), |p| {
            p.push["entries"][1]["display_name"] == "Bobby"
        })
        .await?;
    assert_eq!(
        push.previous(),
        snap["version"].as_u64().unwrap(),
        "{}",
        push.push
    );
    assert_eq!(push.rows(), rows(&snap), "the same rows, renamed");

    // cy is outside the view: a rename of cy pushes nothing to it.
    profile("cy", serde_json::json!({"display_name": "Cy"})).await?;
    assert!(
        viewer
            .next_push(Duration::from_millis(1_500))
            .await?
            .is_none(),
        "a push for a rename outside the view"
    );

    // An erasure takes ada's name off the view with the next push.
    let (status, erased) = stack
        .call(
            reqwest::Method::DELETE,
            "/players/ada",
            Some(serde_json::json!({"reason": "GDPR request"})),
        )
        .await?;
    assert_eq!(status, 200, "{erased}");
    let (push, _) = viewer
        .push_where(Duration::from_secs(5), |p| {
            p.push["entries"][0]["player_id"] != "ada"
                || p.push["entries"][0]["display_name"].is_null()
        })
        .await?;
    assert!(
        push.rows().iter().all(|(p, _)| p != "ada")
            || push.push["entries"][0]["display_name"].is_null(),
        "{}",
        push.push
    );
    Ok(())
}
