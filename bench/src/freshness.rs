//! Freshness on the full local stack: the time from an accepted write to the moment
//! another player's read of that player's rank shows it, with the write-through off so
//! only the stream path (poller -> projector -> Redis) carries the change, and the read
//! path as deployed (its reply cache on or off, as the stack was started).

use std::time::{Duration, Instant};

use futures::future::join_all;
use serde::Serialize;
use serde_json::{Value, json};

use crate::stats::{Summary, bar};

#[derive(Debug, Clone, Serialize)]
pub struct Freshness {
    pub label: String,
    pub writes: usize,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

struct Api {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Api {
    async fn post(&self, path: &str, body: Value) -> anyhow::Result<u16> {
        let resp = self
            .http
            .post(format!("{}{path}", self.base))
            .header("x-api-key", &self.key)
            .json(&body)
            .send()
            .await?;
        Ok(resp.status().as_u16())
    }

    /// A viewer's read of `player`'s score (another player's token: the cache applies).
    async fn score_of(&self, board: &str, player: &str) -> anyhow::Result<Option<i64>> {
        let resp = self
            .http
            .get(format!(
                "{}/leaderboards/{board}/players/{player}/rank?k=0",
                self.base
            ))
            .header("authorization", crate::load::viewer_token())
            .send()
            .await?;
        if resp.status().as_u16() != 200 {
            return Ok(None);
        }
        let v: Value = resp.json().await?;
        Ok(v["score"].as_i64())
    }
}

async fn write(api: &Api, board: &str, player: &str, score: i64, m: &str) -> anyhow::Result<()> {
    let status = api
        .post(
            &format!("/leaderboards/{board}/players/{player}/score"),
            json!({"new_score": score, "match_id": m}),
        )
        .await?;
    anyhow::ensure!(status == 200, "write refused: {status}");
    Ok(())
}

/// Waits until a viewer's read shows `score`, polling every 5 ms.
async fn until_seen(api: &Api, board: &str, player: &str, score: i64) -> anyhow::Result<Instant> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if api.score_of(board, player).await? == Some(score) {
            return Ok(Instant::now());
        }
        anyhow::ensure!(Instant::now() < deadline, "{player} not visible after 30 s");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub async fn run(label: &str, base: &str, key: &str, writes: usize) -> anyhow::Result<Freshness> {
    let api = Api {
        http: leaderboard::adapters::tls::http().build()?,
        base: base.to_owned(),
        key: key.to_owned(),
    };
    let board = format!("fresh-{}", chrono::Utc::now().timestamp_millis());
    let status = api
        .post("/leaderboards", json!({"leaderboard_id": board}))
        .await?;
    anyhow::ensure!(status == 201, "create board: {status}");
    let players: Vec<String> = (0..writes).map(|i| format!("f{i:04}")).collect();
    // Every player has a score (and viewers have read it) before the measured writes.
    for group in players.chunks(10) {
        join_all(group.iter().map(|p| write(&api, &board, p, 1, "seed")))
            .await
            .into_iter()
            .collect::<anyhow::Result<Vec<_>>>()?;
        join_all(group.iter().map(|p| until_seen(&api, &board, p, 1)))
            .await
            .into_iter()
            .collect::<anyhow::Result<Vec<_>>>()?;
    }
    let bar = bar(writes as u64, &format!("freshness ({label})"));
    let mut samples = Vec::with_capacity(writes);
    for (g, group) in players.chunks(10).enumerate() {
        let one = async |i: usize, p: &str| {
            let score = 1_000 + (g * 10 + i) as i64;
            api.score_of(&board, p).await?;
            write(&api, &board, p, score, "measured").await?;
            let accepted = Instant::now();
            let seen = until_seen(&api, &board, p, score).await?;
            Ok::<_, anyhow::Error>(seen - accepted)
        };
        for took in join_all(group.iter().enumerate().map(|(i, p)| one(i, p))).await {
            samples.push(took?);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    let max_ms = samples.iter().max().map_or(0.0, |d| d.as_secs_f64() * 1e3);
    let s = Summary::of(samples);
    let f = Freshness {
        label: label.to_owned(),
        writes,
        p50_ms: s.p50_us / 1e3,
        p95_ms: s.p95_us / 1e3,
        p99_ms: s.p99_us / 1e3,
        max_ms,
    };
    println!(
        "{:>28}: p50 {:.0} ms  p95 {:.0} ms  p99 {:.0} ms  max {:.0} ms over {} writes",
        format!("freshness ({label})"),
        f.p50_ms,
        f.p95_ms,
        f.p99_ms,
        f.max_ms,
        f.writes
    );
    Ok(f)
}
