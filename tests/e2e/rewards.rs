//! Reward tables over HTTP on the local stack: a family's day (three days ago, played
//! with the service's clock set into it) sealed with a reward table, every player's
//! rewards on every scope checked against a model written here from docs/rewards.md
//! (competition places, so a tie at a range's edge pays every tied player; the top
//! half rounded up; an erased player's place unpaid; players of another day paid
//! nothing), one `leaderboard.rewards.decided` per board however often the seal runs,
//! and a reward claimed by ten requests at once granted once. The stack's webhooks are
//! on (the template's parameters): each board's `rewards.decided` reaches a local
//! receiver once it has answered the first try 500 (with the secret's header, at most
//! the rate limit's pace), and a claim's event the receiver refuses with a 400 is not
//! tried again but lands in the dead-letter queue.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::Result;
use serde_json::{Value, json};

use crate::support::{
    Receiver, Stack, StackOptions, drain, dynamodb_url, events_clients, eventually, redis_url,
    secrets_client, subscribe, unique,
};

const DAY_MS: i64 = 86_400_000;

/// The table the family pays by, and the model of it.
fn table() -> Value {
    json!({"rank_mode": "competition", "expires_after_days": 7, "ranges": [
        {"from_rank": 1, "to_rank": 1, "reward": "crown"},
        {"from_rank": 2, "to_rank": 3, "reward": "gem", "quantity": 50},
        {"top_percent": 50, "reward": "coin", "quantity": 100}]})
}

/// What `scores` (player -> score, one scope's participants) earn: a competition place
/// is one more than the players with a strictly better score, and the first range that
/// covers it pays. Player -> (reward, quantity, place).
fn model(scores: &BTreeMap<String, i64>) -> BTreeMap<String, (String, u64, u64)> {
    let n = scores.len() as u64;
    let half = (n * 50).div_ceil(100);
    (scores.iter())
        .filter_map(|(p, s)| {
            let place = 1 + scores.values().filter(|o| *o > s).count() as u64;
            let paid = match place {
                1 => ("crown", 1),
                2..=3 => ("gem", 50),
                _ if place <= half => ("coin", 100),
                _ => return None,
            };
            Some((p.clone(), (paid.0.to_owned(), paid.1, place)))
        })
        .collect()
}

/// The midnight (UTC) `days` days before today's, and its date.
fn day(days: i64) -> (i64, String) {
    let now = chrono::Utc::now().timestamp_millis();
    let start = (now / DAY_MS - days) * DAY_MS;
    let date = chrono::DateTime::from_timestamp_millis(start).unwrap_or_default();
    (start, date.format("%Y-%m-%d").to_string())
}

/// Seals `lb` (`POST /admin/seal` until done); the seal's report.
async fn seal(stack: &Stack, lb: &str) -> Result<Value> {
    loop {
        let (status, report) = stack
            .post("/admin/seal", json!({"leaderboard_id": lb}))
            .await?;
        anyhow::ensure!(status == 200 || status == 202, "{status} {report}");
        if status == 200 {
            return Ok(report);
        }
    }
}

/// A player's claimable rewards, as `GET /me/rewards` lists them: board -> (reward,
/// quantity, place).
async fn rewards_of(stack: &Stack, p: &str) -> Result<BTreeMap<String, (String, u64, u64)>> {
    let (status, _, body) = stack.get_as("/me/rewards", p).await?;
    anyhow::ensure!(status == 200, "{status} {body}");
    Ok((body["rewards"].as_array().into_iter().flatten())
        .map(|r| {
            let lb = r["leaderboard_id"].as_str().unwrap_or_default().to_owned();
            let paid = (
                r["reward"].as_str().unwrap_or_default().to_owned(),
                r["quantity"].as_u64().unwrap_or(0),
            );
            (lb, (paid.0, paid.1, r["place"].as_u64().unwrap_or(0)))
        })
        .collect())
}

#[tokio::test]
async fn a_family_day_pays_each_place_by_its_table_once_and_a_reward_is_claimed_once() -> Result<()>
{
    // The receiver: a board's rewards answered 500 the first time, then 200; claims 400.
    let receiver = Receiver::start(|path, before| match path {
        "/claimed" => 400,
        _ if before == 0 => 500,
        _ => 200,
    })
    .await?;
    let secret = (secrets_client(&dynamodb_url()).await.create_secret())
        .name(unique("webhook"))
        .secret_string("s3cret-token")
        .send()
        .await?;
    let (decided_url, claimed_url) = (
        format!("{}/decided", receiver.url),
        format!("{}/claimed", receiver.url),
    );
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            env: &[("SEAL_SETTLE_SECONDS", "1")],
            parameters: &[
                ("WebhookSecretArn", secret.arn().unwrap_or_default()),
                ("WebhookAuthHeader", "X-Webhook-Token"),
                ("WebhookRewardsDecidedUrl", &decided_url),
                ("WebhookRewardClaimedUrl", &claimed_url),
                ("WebhookRetries", "5"),
                ("WebhookRateLimit", "4"),
            ],
            ..Default::default()
        },
    )
    .await?;
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let (sqs, decided_q) = subscribe(&stack, "leaderboard.rewards.decided").await?;
    let (_, claimed_q) = subscribe(&stack, "leaderboard.reward.claimed").await?;
    let game = unique("rw").replace('-', "_");
    let game = game[game.len().saturating_sub(30)..].to_owned();
    let family = json!({"game": game, "mode": "m", "policy": "BEST", "regions": ["EU", "NA"],
        "periods": ["DAILY"], "grace_seconds": 0, "rewards": table()});
    let (status, body) = stack.post("/families", family).await?;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["rewards"]["rank_mode"], "competition");

    // Three days ago: 16 players, ties at the edge of each range; w03 is erased before
    // the seal. The day before, two players who play no more (nothing for them).
    let ((before, _), (start, date)) = (day(4), day(3));
    let scores = [
        900, 800, 800, 700, 700, 700, 600, 500, 500, 400, 300, 300, 200, 100, 100, 50,
    ];
    let fam = (game.clone(), "m".to_owned());
    let mut by_scope: BTreeMap<String, BTreeMap<String, i64>> = BTreeMap::new();
    for (i, score) in scores.iter().enumerate() {
        let (p, region) = (format!("w{i:02}"), if i % 2 == 0 { "EU" } else { "NA" });
        env.ctx
            .clock
            .set(Some(start + 3_600_000 + i as i64 * 1_000));
        env.submit_match(&fam, region, &p, "m1", *score, None)
            .await?;
        if p != "w03" {
            for scope in ["GLOBAL", region] {
                by_scope
                    .entry(scope.into())
                    .or_default()
                    .insert(p.clone(), *score);
            }
        }
    }
    for (i, p) in ["x00", "x01"].iter().enumerate() {
        env.ctx
            .clock
            .set(Some(before + 3_600_000 + i as i64 * 1_000));
        env.submit_match(&fam, ["EU", "NA"][i], p, "m0", 1_000, None)
            .await?;
    }
    env.ctx.clock.set(None);
    stack.erase_player("w03").await?;

    // The day's three boards sealed, then sealed again: nothing decided twice.
    let boards: BTreeMap<String, String> = (by_scope.keys())
        .map(|scope| (scope.clone(), format!("{game}:m:{scope}:DAILY:{date}")))
        .collect();
    for lb in boards.values() {
        seal(&stack, lb).await?;
    }
    let events = eventually(
        Duration::from_secs(20),
        "every board's rewards decided",
        || {
            let (sqs, q) = (&sqs, &decided_q);
            async move {
                let got = drain(sqs, q).await?;
                Ok((got.len() >= 3).then_some(got))
            }
        },
    )
    .await?;
    for lb in boards.values() {
        let again = seal(&stack, lb).await?;
        assert_eq!(again["boards"][0]["outcome"], "already_sealed", "{again}");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        drain(&sqs, &decided_q).await?.is_empty(),
        "decided once per board"
    );
    assert_eq!(events.len(), 3);

    // Each board's event and each player's rewards are the model's.
    let mut want: BTreeMap<String, BTreeMap<String, (String, u64, u64)>> = BTreeMap::new();
    for (scope, lb) in &boards {
        let paid = model(&by_scope[scope]);
        let event = (events.iter())
            .find(|e| e["detail"]["rewards_id"] == lb.as_str())
            .unwrap_or_else(|| panic!("no event for {lb}: {events:?}"));
        assert_eq!(event["detail"]["total"], by_scope[scope].len());
        let decided: BTreeMap<String, (String, u64, u64)> =
            (event["detail"]["rewards"].as_array().into_iter().flatten())
                .map(|r| {
                    let p = r["player_id"].as_str().unwrap_or_default().to_owned();
                    let paid = (
                        r["reward"].as_str().unwrap_or_default().to_owned(),
                        r["quantity"].as_u64().unwrap_or(0),
                    );
                    (p, (paid.0, paid.1, r["place"].as_u64().unwrap_or(0)))
                })
                .collect();
        assert_eq!(decided, paid, "{lb}");
        for (p, r) in paid {
            want.entry(p).or_default().insert(lb.clone(), r);
        }
    }
    assert_eq!(
        want["w01"][&boards["GLOBAL"]].0, "gem",
        "a tie at 800 shares place 2"
    );
    let players: BTreeSet<String> = (0..16)
        .map(|i| format!("w{i:02}"))
        .chain(["x00".into(), "x01".into()])
        .collect();
    for p in &players {
        let got = rewards_of(&stack, p).await?;
        let expected: BTreeMap<String, (String, u64, u64)> = (want.get(p).into_iter().flatten())
            .map(|(lb, r)| (lb.clone(), r.clone()))
            .collect();
        assert_eq!(got, expected, "{p}");
    }

    // The webhook: each board's event once answered 200, after one 500, with the
    // secret's header, the bus's event whole, four requests a second at most.
    let hooked = eventually(
        Duration::from_secs(30),
        "each board's webhook delivered",
        || {
            let receiver = &receiver;
            async move {
                let got = receiver.received();
                Ok((got.iter().filter(|r| r.status == 200).count() >= 3).then_some(got))
            }
        },
    )
    .await?;
    for lb in boards.values() {
        let tries: Vec<_> = (hooked.iter())
            .filter(|r| r.body["detail"]["rewards_id"] == lb.as_str())
            .collect();
        let statuses: Vec<u16> = tries.iter().map(|r| r.status).collect();
        assert_eq!(statuses, [500, 200], "{lb}");
        let bus = (events.iter())
            .find(|e| e["detail"]["rewards_id"] == lb.as_str())
            .unwrap();
        for t in &tries {
            assert_eq!(t.path, "/decided");
            assert_eq!(t.header("x-webhook-token"), Some("s3cret-token"));
            assert_eq!(t.body["detail-type"], "leaderboard.rewards.decided");
            assert_eq!(t.body["detail"], bus["detail"]);
            assert_eq!(
                t.body["id"], tries[0].body["id"],
                "a retry is the same event"
            );
        }
    }
    let span = hooked.last().unwrap().at - hooked[0].at;
    assert!(
        span >= Duration::from_millis(1_200),
        "6 requests at 4 a second took {span:?}"
    );

    // Ten claims of w00's GLOBAL crown at once: one claims, the rest are told that
    // claim (a 503 `contention` while its event is going out is asked again).
    let global = &boards["GLOBAL"];
    let claims = (0..10).map(|_| {
        let (stack, path) = (&stack, format!("/me/rewards/{global}/claim"));
        async move {
            loop {
                let (status, reply) = stack.post_as(&path, "w00", json!({})).await?;
                if status == 503 && reply["error"]["code"] == "contention" {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                anyhow::ensure!(status == 200, "{status} {reply}");
                return Ok::<_, anyhow::Error>(reply);
            }
        }
    });
    let replies = futures::future::try_join_all(claims).await?;
    let first: Vec<&Value> = replies.iter().filter(|r| r["replayed"] == false).collect();
    assert_eq!(first.len(), 1, "{replies:?}");
    assert!(
        replies
            .iter()
            .all(|r| r["reward"]["claimed_at"] == first[0]["reward"]["claimed_at"])
    );
    assert_eq!(first[0]["reward"]["claimed_by"], "player");
    // A game server claims w01's for them; an unknown reward is a 404.
    let (status, server) = stack
        .post(&format!("/players/w01/rewards/{global}/claim"), json!({}))
        .await?;
    assert_eq!(
        (status, &server["replayed"]),
        (200, &json!(false)),
        "{server}"
    );
    let (status, missing) = stack
        .post_as("/me/rewards/nope/claim", "w01", json!({}))
        .await?;
    assert_eq!(
        (status, missing["error"]["code"].as_str()),
        (404, Some("reward_not_found"))
    );
    let claimed = eventually(Duration::from_secs(10), "both claims' events", || {
        let (sqs, q) = (&sqs, &claimed_q);
        async move {
            let got = drain(sqs, q).await?;
            Ok((!got.is_empty()).then_some(got))
        }
    })
    .await?;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut claimed = claimed;
    claimed.extend(drain(&sqs, &claimed_q).await?);
    let ids: BTreeSet<String> = (claimed.iter())
        .map(|e| {
            e["detail"]["claim_id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(claimed.len(), 2, "one event a claim: {claimed:?}");
    assert_eq!(
        ids,
        BTreeSet::from([format!("w00/{global}"), format!("w01/{global}")])
    );
    // The claims' webhook answered 400: not tried again, each in the dead-letter queue.
    let (_, dlq_sqs) = events_clients(&dynamodb_url()).await;
    let dlq = (dlq_sqs.get_queue_url())
        .queue_name(format!("{}-WebhookDeadLetters", stack.table))
        .send()
        .await?;
    let dlq = dlq.queue_url().unwrap_or_default().to_owned();
    let dead = eventually(Duration::from_secs(20), "both claims dead-lettered", || {
        let (sqs, q) = (&dlq_sqs, &dlq);
        async move {
            let got = (sqs.receive_message().queue_url(q))
                .max_number_of_messages(10)
                .message_attribute_names("All")
                .visibility_timeout(60)
                .send()
                .await?;
            let got = got.messages().to_vec();
            Ok((got.len() >= 2).then_some(got))
        }
    })
    .await?;
    for m in &dead {
        let code = (m.message_attributes().and_then(|a| a.get("ERROR_CODE")))
            .and_then(|v| v.string_value());
        assert_eq!(code, Some("NOT_RETRIED"));
        let body: Value = serde_json::from_str(m.body().unwrap_or("{}"))?;
        assert!(ids.contains(body["detail"]["claim_id"].as_str().unwrap_or_default()));
    }
    let refused = receiver
        .received()
        .into_iter()
        .filter(|r| r.path == "/claimed")
        .count();
    assert_eq!(refused, 2, "a 400 is not tried again");
    let (_, _, mine) = stack.get_as("/me/rewards", "w00").await?;
    assert_eq!(mine["claimed"][0]["reward_id"], global.as_str());
    assert!(
        !mine["rewards"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["reward_id"] == global.as_str())
    );
    Ok(())
}
