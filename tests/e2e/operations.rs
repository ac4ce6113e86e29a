//! Operations on the local stack (docs/runbook.md). A stretch of traffic (results, reads,
//! a stream record that can never apply, the schedules), then a DynamoDB outage met by a
//! request to every HTTP function: every metric an alarm or a dashboard widget in
//! `template.yaml` names in the service's own namespace was printed by a function, with
//! the dimensions it is named with, and every function counted the 5xx reply it wrote,
//! by its route. And the seal's heartbeat and failure metrics while DynamoDB is away: a
//! failing run still beats, and says it failed, and the failures stop when it is back.
//!
//! The functions' metrics are the Embedded Metric Format lines they print (the local
//! stack keeps each function's stdout in `<Function>.log`), read as CloudWatch reads them.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use anyhow::{Context as _, Result, ensure};
use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::support::{OwnDynamo, Stack, StackOptions, python, redis_url, root, unique};

/// Checks `probe` every 200 ms until it holds, or fails after `within` with what it last
/// said (reading logs needs no await).
async fn until<T>(within: Duration, what: &str, mut probe: impl FnMut() -> Result<T>) -> Result<T> {
    let start = std::time::Instant::now();
    loop {
        match probe() {
            Ok(v) => return Ok(v),
            Err(e) if start.elapsed() > within => {
                return Err(e.context(format!("{what}: not within {within:?}")));
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(200)).await,
        }
    }
}

/// One metric value a function printed.
#[derive(Debug)]
struct Emitted {
    /// The log it was printed to: `<Function>.log`.
    file: String,
    namespace: String,
    name: String,
    dimensions: BTreeMap<String, String>,
    value: Value,
}

/// Every EMF metric in the stack's function logs, as CloudWatch extracts them: each
/// directive's namespace, each of its dimension sets, each of its metrics.
fn emitted(stack: &Stack) -> Vec<Emitted> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir(&stack.run_dir) else {
        return out;
    };
    for entry in dir.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for doc in text
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        {
            let Some(directives) = doc["_aws"]["CloudWatchMetrics"].as_array() else {
                continue;
            };
            for d in directives {
                let namespace = d["Namespace"].as_str().unwrap_or_default();
                let sets = d["Dimensions"].as_array().cloned().unwrap_or_default();
                for set in sets {
                    let dimensions: BTreeMap<String, String> = set
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .map(|k| (k.to_owned(), doc[k].as_str().unwrap_or_default().to_owned()))
                        .collect();
                    for m in d["Metrics"].as_array().into_iter().flatten() {
                        let name = m["Name"].as_str().unwrap_or_default().to_owned();
                        out.push(Emitted {
                            file: file.clone(),
                            namespace: namespace.to_owned(),
                            name: name.clone(),
                            dimensions: dimensions.clone(),
                            value: doc[&name].clone(),
                        });
                    }
                }
            }
        }
    }
    out
}

/// A metric `template.yaml` names (`infra/local/watched_metrics.py`).
#[derive(Debug, Deserialize)]
struct Watched {
    #[serde(rename = "where")]
    named_by: String,
    namespace: String,
    name: String,
    /// Null for a dashboard SEARCH, which names the dimensions' names only.
    dimensions: Option<BTreeMap<String, Value>>,
    dimension_names: BTreeSet<String>,
}

#[derive(Debug, Deserialize)]
struct Template {
    watched: Vec<Watched>,
    /// Route key -> the function that answers it.
    routes: BTreeMap<String, String>,
}

fn template() -> Result<Template> {
    let out = std::process::Command::new(python())
        .arg(root().join("infra/local/watched_metrics.py"))
        .arg(root().join("template.yaml"))
        .current_dir(root().join("infra/local"))
        .output()
        .context("run watched_metrics.py")?;
    ensure!(
        out.status.success(),
        "watched_metrics.py: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

impl Watched {
    fn met_by(&self, e: &Emitted) -> bool {
        if e.namespace != self.namespace || e.name != self.name {
            return false;
        }
        match &self.dimensions {
            None => e.dimensions.keys().cloned().collect::<BTreeSet<_>>() == self.dimension_names,
            Some(want) => {
                want.len() == e.dimensions.len()
                    && want
                        .iter()
                        .all(|(k, v)| v.as_str() == e.dimensions.get(k).map(String::as_str))
            }
        }
    }
}

/// The watched metrics of the service's namespace no function printed yet ("where: name").
fn missing(template: &Template, seen: &[Emitted]) -> Vec<String> {
    let ours = template
        .watched
        .iter()
        .filter(|w| w.namespace == "Leaderboard");
    ours.filter(|w| !seen.iter().any(|e| w.met_by(e)))
        .map(|w| format!("{}: {} {:?}", w.named_by, w.name, w.dimensions))
        .collect()
}

/// One request per HTTP function that needs DynamoDB for its answer (fresh ids, so no
/// cache can answer it): with DynamoDB away, each must answer 5xx.
fn one_request_per_function(tag: &str) -> Vec<(&'static str, Method, String, Option<Value>)> {
    let lb = unique(&format!("{tag}-gone"));
    let p = unique("p");
    let t = unique("t");
    vec![
        (
            "IngestFunction",
            Method::POST,
            format!("/leaderboards/{lb}/players/{p}/score"),
            Some(json!({"new_score": 1, "match_id": "m-1"})),
        ),
        (
            "RankFunction",
            Method::GET,
            format!("/leaderboards/{lb}/players/{p}/rank"),
            None,
        ),
        (
            "TopFunction",
            Method::GET,
            format!("/leaderboards/{lb}/top"),
            None,
        ),
        (
            "FriendsFunction",
            Method::GET,
            format!("/leaderboards/{lb}/players/{p}/friends-rank"),
            None,
        ),
        (
            "BoardsFunction",
            Method::GET,
            format!("/leaderboards/{lb}"),
            None,
        ),
        (
            "AdminFunction",
            Method::GET,
            "/admin/audit".to_owned(),
            None,
        ),
        (
            "ModerationFunction",
            Method::PUT,
            format!("/games/{tag}/bans/{p}"),
            Some(json!({"reason": "cheating"})),
        ),
        (
            "ProfilesFunction",
            Method::GET,
            format!("/players/{p}/profile"),
            None,
        ),
        (
            "TournamentsFunction",
            Method::GET,
            format!("/tournaments/{t}"),
            None,
        ),
        (
            "RebuildFunction",
            Method::POST,
            "/admin/rebuild".to_owned(),
            Some(json!({"leaderboard_id": lb})),
        ),
        (
            "SealFunction",
            Method::POST,
            "/admin/seal".to_owned(),
            Some(json!({"leaderboard_id": lb})),
        ),
    ]
}

#[tokio::test]
async fn every_metric_the_alarms_and_the_dashboard_name_is_emitted_and_every_5xx_counted()
-> Result<()> {
    let template = template()?;
    let mut dynamo = OwnDynamo::start_new().await?;
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            dynamodb_url: Some(dynamo.url()),
            env: &[("LB_KINESIS", "1"), ("SEAL_SETTLE_SECONDS", "0")],
            schedule_every: Some(1.0),
            ..Default::default()
        },
    )
    .await?;

    // Traffic: results (one improving, one not), reads, a stream record no mapping
    // takes (dead-lettered), and the schedules (seal and sweep every second here).
    let lb = stack.create_board("ops").await?;
    stack.post_score(&lb, "ann", "m-1", 10).await?;
    stack.post_score(&lb, "ann", "m-2", 5).await?;
    stack.post_score(&lb, "bob", "m-1", 7).await?;
    let (status, _) = stack.get(&format!("/leaderboards/{lb}/top")).await?;
    ensure!(status == 200);
    let record = json!({"key": "ann", "value": "not a match result"});
    let stream = format!("{}-ScoreEventsStream", stack.table);
    kinesis(&dynamo.url(), &stream, &record)?;
    let before_outage = until(Duration::from_secs(60), "the traffic's metrics", || {
        let seen = emitted(&stack);
        let left: Vec<String> = missing(&template, &seen)
            .into_iter()
            .filter(|m| !m.contains("ServerErrorReplies"))
            .collect();
        ensure!(left.is_empty(), "not emitted yet: {left:#?}");
        Ok(seen.len())
    })
    .await?;
    ensure!(before_outage > 0);

    // The outage: every HTTP function answers 5xx, and counts it.
    dynamo.stop();
    let requests = one_request_per_function(&unique("ops"));
    let answers = futures::future::join_all(
        requests
            .iter()
            .map(|(_, method, path, body)| stack.call(method.clone(), path, body.clone())),
    )
    .await;
    for ((function, method, path, _), answer) in requests.iter().zip(answers) {
        let (status, body) = answer?;
        ensure!(
            status >= 500,
            "{function}: {method} {path} answered {status} {body}"
        );
    }
    let counted = until(Duration::from_secs(30), "every 5xx counted", || {
        let seen = emitted(&stack);
        let left = missing(&template, &seen);
        ensure!(left.is_empty(), "not emitted: {left:#?}");
        // Each function's own log has its 5xx, by the route it answered.
        let mut counted = BTreeSet::new();
        for e in seen
            .iter()
            .filter(|e| e.name == "ServerErrorReplies" && e.value.as_u64() >= Some(1))
        {
            if let Some(route) = e.dimensions.get("Route") {
                let function = template
                    .routes
                    .get(route)
                    .map(String::as_str)
                    .unwrap_or_default();
                ensure!(
                    e.file == format!("{function}.log"),
                    "{route} counted in {}",
                    e.file
                );
                counted.insert(function.to_owned());
            }
        }
        let uncounted: Vec<_> = requests
            .iter()
            .map(|r| r.0)
            .filter(|f| !counted.contains(*f))
            .collect();
        ensure!(uncounted.is_empty(), "5xx not counted by {uncounted:?}");
        Ok(counted.len())
    })
    .await?;
    assert_eq!(counted, requests.len());
    Ok(())
}

/// Puts `record` (`{key, value}`) on the stack's Kinesis stream (`infra/local/pods.py`).
fn kinesis(endpoint: &str, stream: &str, record: &Value) -> Result<()> {
    use std::io::Write as _;
    let mut child = std::process::Command::new(python())
        .arg(root().join("infra/local/pods.py"))
        .args(["kinesis", "--endpoint", endpoint, "--stream", stream])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .context("start pods.py")?;
    writeln!(child.stdin.take().context("stdin")?, "{record}")?;
    ensure!(child.wait()?.success(), "pods.py kinesis failed");
    Ok(())
}

/// The seal function's metrics, in the order its runs printed them: (SealRuns,
/// SealRunFailures) per run.
fn seal_runs(stack: &Stack) -> Vec<(u64, u64)> {
    let seen = emitted(stack);
    let of = |name: &str| -> Vec<u64> {
        seen.iter()
            .filter(|e| e.file == "SealFunction.log" && e.name == name && e.dimensions.is_empty())
            .filter_map(|e| e.value.as_u64())
            .collect()
    };
    of("SealRuns")
        .into_iter()
        .zip(of("SealRunFailures"))
        .collect()
}

#[tokio::test]
async fn a_failing_seal_still_beats_and_counts_its_failures_until_dynamodb_is_back() -> Result<()> {
    let mut dynamo = OwnDynamo::start_new().await?;
    let stack = Stack::launch(
        &redis_url(),
        StackOptions {
            dynamodb_url: Some(dynamo.url()),
            schedule_every: Some(1.0),
            ..Default::default()
        },
    )
    .await?;
    let healthy = until(Duration::from_secs(30), "a healthy seal run", || {
        let runs = seal_runs(&stack);
        ensure!(runs.contains(&(1, 0)), "runs so far: {runs:?}");
        Ok(runs.len())
    })
    .await?;

    // DynamoDB away: the schedule's runs fail; each still beats and says it failed.
    dynamo.stop();
    let failing = until(Duration::from_secs(60), "failing seal runs", || {
        let runs = seal_runs(&stack);
        let failed = runs[healthy..].iter().filter(|&&r| r == (1, 1)).count();
        ensure!(failed >= 2, "runs since the outage: {:?}", &runs[healthy..]);
        Ok(runs.len())
    })
    .await?;
    // Lambda's own error count sees them too: the scheduled invocation failed.
    let errors = stack.log_lines("SealFunction.log", "\"level\":\"ERROR\"")
        + stack.log_lines("stack.err", "scheduled invocation failed");
    ensure!(errors >= 1, "no failed invocation logged");

    // Back: the runs succeed again.
    dynamo.start().await?;
    until(Duration::from_secs(60), "seal runs recovered", || {
        let runs = seal_runs(&stack);
        ensure!(
            runs[failing..].contains(&(1, 0)),
            "runs since the restart: {:?}",
            &runs[failing..]
        );
        Ok(())
    })
    .await?;
    Ok(())
}
