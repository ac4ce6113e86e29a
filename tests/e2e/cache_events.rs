//! The rank index's ElastiCache notifications over the local stack: SNS (moto) delivers
//! a failover to the repair function as SNS's event, and the boards on the failed-over
//! shard's slots are rebuilt from DynamoDB before anyone reads them; a board on another
//! shard is left alone.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use serde_json::Value;

use crate::support::*;

/// The shard `GET /admin/index` places the board on.
async fn shard_of(stack: &Stack, lb: &str) -> Result<String> {
    let (status, view) = stack
        .get(&format!("/admin/index?leaderboard_id={lb}"))
        .await?;
    anyhow::ensure!(status == 200, "{view}");
    Ok(view["board"]["node_group_id"]
        .as_str()
        .context("no shard")?
        .to_owned())
}

/// Publishes `message` on the topic, as ElastiCache does (SNS's Query API on moto).
async fn publish(stack: &Stack, topic: &str, message: &str) -> Result<()> {
    let form = [
        ("Action", "Publish"),
        ("Version", "2010-03-31"),
        ("TopicArn", topic),
        ("Message", message),
    ];
    let body = form
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencode(v)))
        .collect::<Vec<_>>()
        .join("&");
    let resp = stack
        .http
        .post(dynamodb_url())
        .header("content-type", "application/x-www-form-urlencoded")
        .header(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=test/20261127/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=0",
        )
        .body(body)
        .send()
        .await?;
    let status = resp.status();
    let text = resp.text().await?;
    anyhow::ensure!(status.is_success(), "publish: {status} {text}");
    Ok(())
}

/// Waits until the stream projector has had nothing to project for two seconds (it
/// would otherwise put back rows the test takes away), at most 30 s.
async fn projector_quiet(stack: &Stack) -> Result<()> {
    let log = stack.run_dir.join("ProjectorFunction.log");
    let batches =
        || std::fs::read_to_string(&log).map_or(0, |t| t.matches("batch projected").count());
    let start = Instant::now();
    let (mut seen, mut since) = (batches(), Instant::now());
    while since.elapsed() < Duration::from_secs(2) {
        anyhow::ensure!(
            start.elapsed() < Duration::from_secs(30),
            "the projector never went quiet"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = batches();
        if now != seen {
            (seen, since) = (now, Instant::now());
        }
    }
    Ok(())
}

fn urlencode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test]
async fn a_failover_notification_rebuilds_the_boards_of_its_shard_before_any_read() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let config: Value = stack
        .http
        .get(format!("{}/config.json", stack.console))
        .send()
        .await?
        .json()
        .await?;
    let topic = config["topic_arn"].as_str().context("no topic")?.to_owned();
    // Two boards on different shards of the local replication group.
    let first = stack.create_board("fo").await?;
    let hit = shard_of(&stack, &first).await?;
    let mut other = None;
    for _ in 0..20 {
        let lb = stack.create_board("fo").await?;
        if shard_of(&stack, &lb).await? != hit {
            other = Some(lb);
            break;
        }
    }
    let other = other.context("20 boards, all on one shard")?;
    for lb in [&first, &other] {
        for (i, p) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            stack.post_score(lb, p, "m1", 10 * i as i64).await?;
        }
    }
    projector_quiet(&stack).await?;
    // What a failover to a replica that had not caught up looks like: the marker says
    // ready, the rows are gone.
    let mut redis = redis::Client::open(redis_url())?
        .get_multiplexed_async_connection()
        .await?;
    let rows = |lb: &str| format!("{}lb:{{{lb}}}:z", stack.prefix);
    for lb in [&first, &other] {
        let () = redis::cmd("DEL")
            .arg(rows(lb))
            .arg(format!("{}lb:{{{lb}}}:h", stack.prefix))
            .query_async(&mut redis)
            .await?;
    }
    let (_, view) = stack.get("/admin/index").await?;
    let group = view["replication_group"]["replication_group_id"]
        .as_str()
        .context("no group")?;
    let calm = format!(r#"{{"ElastiCache:SnapshotComplete":"{group}-{hit}-001"}}"#);
    publish(&stack, &topic, &calm).await?;
    let failover = format!(r#"{{"ElastiCache:FailoverComplete":"{group}-{hit}-002"}}"#);
    let sent = Instant::now();
    publish(&stack, &topic, &failover).await?;
    // No read of either board from here on: only the notification can bring rows back.
    loop {
        let n: u64 = redis::cmd("ZCARD")
            .arg(rows(&first))
            .query_async(&mut redis)
            .await?;
        if n == 5 {
            break;
        }
        if sent.elapsed() > Duration::from_secs(30) {
            bail!(
                "the failed-over shard's board has {n} of its 5 rows 30 s after the notification"
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    println!(
        "failover notification: the shard's board rebuilt {:?} after it",
        sent.elapsed()
    );
    let n: u64 = redis::cmd("ZCARD")
        .arg(rows(&other))
        .query_async(&mut redis)
        .await?;
    assert_eq!(n, 0, "a board on shard other than {hit} was rebuilt too");
    let log = std::fs::read_to_string(stack.run_dir.join("RepairFunction.log"))?;
    assert!(
        log.contains("cache notification with nothing to repair"),
        "the snapshot notice was not handled"
    );
    Ok(())
}
