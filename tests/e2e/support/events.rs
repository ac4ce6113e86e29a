//! The stack's event bus as a subscriber sees it: a rule sending one detail-type to a
//! queue, and the queue drained. Every event drained is also written to
//! `$LB_TEST_EVENTS_DIR` (when set), where `infra/scripts/check_events.py` checks it
//! against its schema in docs/events after the run.

use anyhow::{Context, Result};
use serde_json::{Value, json};

use super::{Stack, dynamodb_url, events_clients, unique};

/// A rule on the stack's bus sending every event of `detail_type` to a new queue; an
/// SQS client and the queue's URL.
pub async fn subscribe(stack: &Stack, detail_type: &str) -> Result<(aws_sdk_sqs::Client, String)> {
    let (events, sqs) = events_clients(&dynamodb_url()).await;
    let bus = format!("{}-LeaderboardEventBus", stack.table);
    let queue = sqs
        .create_queue()
        .queue_name(unique("rewards"))
        .send()
        .await?;
    let url = queue.queue_url().context("queue url")?.to_owned();
    let attrs = sqs
        .get_queue_attributes()
        .queue_url(&url)
        .attribute_names(aws_sdk_sqs::types::QueueAttributeName::QueueArn)
        .send()
        .await?;
    let arn = attrs
        .attributes()
        .and_then(|a| a.get(&aws_sdk_sqs::types::QueueAttributeName::QueueArn))
        .context("queue arn")?
        .clone();
    let pattern = json!({"source": ["leaderboard"], "detail-type": [detail_type]});
    let rule = unique("rule");
    events
        .put_rule()
        .name(&rule)
        .event_bus_name(&bus)
        .event_pattern(pattern.to_string())
        .send()
        .await?;
    let target = aws_sdk_eventbridge::types::Target::builder()
        .id("rewards-queue")
        .arn(arn)
        .build()?;
    events
        .put_targets()
        .rule(&rule)
        .event_bus_name(&bus)
        .targets(target)
        .send()
        .await?;
    Ok((sqs, url))
}

/// Every event the queue holds now (the details).
pub async fn drain(sqs: &aws_sdk_sqs::Client, url: &str) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    loop {
        let got = sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .send()
            .await?;
        let messages = got.messages();
        if messages.is_empty() {
            return Ok(out);
        }
        for m in messages {
            let event: Value = serde_json::from_str(m.body().unwrap_or("{}"))?;
            keep(&event)?;
            out.push(event);
            if let Some(handle) = m.receipt_handle() {
                sqs.delete_message()
                    .queue_url(url)
                    .receipt_handle(handle)
                    .send()
                    .await?;
            }
        }
    }
}

/// Writes `event` where the run's schema check reads it (nothing when no folder is set).
fn keep(event: &Value) -> Result<()> {
    let Ok(dir) = std::env::var("LB_TEST_EVENTS_DIR") else {
        return Ok(());
    };
    let kind = event["detail-type"].as_str().unwrap_or("unknown");
    let id = event["id"]
        .as_str()
        .map_or_else(|| unique("event"), str::to_owned);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(format!("{dir}/{kind}-{id}.json"), event.to_string())?;
    Ok(())
}
