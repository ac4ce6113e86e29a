//! `--matches-only`: a whole match in one request (`POST /matches`) against the same
//! results posted as a game server posts them one player at a time (`POST /scores`, 8 at
//! a time), side by side on one local stack (`BENCH_LOAD_URL`, its run directory
//! `BENCH_LOAD_DIR`), alternating which goes first. What a request costs is read where AWS
//! bills it: the ingest function's log, where the local Lambda service writes each
//! invocation's START, END and REPORT lines (billed duration, memory size) beside the
//! function's own lines, so log bytes and GB-seconds are those of the invocations; the
//! DynamoDB units per player from the meter (`BENCH_METER_URL`), in process.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context as _, ensure};
use futures::stream::{self, StreamExt, TryStreamExt};
use leaderboard_core::service::boards::{CreateFamily, create_family};
use leaderboard_core::service::scores::{
    MatchBody, MatchResult, WholeMatch, submit_match, submit_whole_match,
};
use serde::Serialize;
use serde_json::{Value, json};

use crate::board::context;
use crate::cost::{Bill, Meter};
use crate::stats::Summary;

/// Players of the small match.
const SMALL: usize = 10;
/// Players of the battle royale.
const LARGE: usize = 100;
/// Requests a game server has in flight when it posts one result per player.
const AT_ONCE: usize = 8;

/// What one way of posting a match cost, per match.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Side {
    pub api_requests: f64,
    pub invocations: f64,
    pub billed_ms: f64,
    pub lambda_gb_seconds: f64,
    pub log_bytes: f64,
    /// DynamoDB units per player (from the meter).
    pub write_units_per_player: f64,
    pub read_units_per_player: f64,
}

/// The rows: a 10-player match both ways, per match and as ratios (`POST /matches`
/// over ten `POST /scores`), and a 100-player match's time both ways.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MatchesResults {
    pub rounds: usize,
    pub small_players: usize,
    pub small_whole: Side,
    pub small_per_player: Side,
    pub requests_ratio: f64,
    pub gb_seconds_ratio: f64,
    pub log_bytes_ratio: f64,
    pub large_players: usize,
    pub large_whole_ms_p50: f64,
    pub large_per_player_ms_p50: f64,
    pub large_time_ratio: f64,
}

/// The stack under test: its API and the ingest function's log.
struct Stack {
    http: reqwest::Client,
    url: String,
    key: String,
    log: PathBuf,
}

/// What the ingest function's log grew by.
#[derive(Default)]
struct Grown {
    bytes: u64,
    invocations: u64,
    billed_ms: u64,
    gb_seconds: f64,
}

impl Stack {
    async fn post(&self, path: &str, body: &Value) -> anyhow::Result<Value> {
        let resp = (self.http.post(format!("{}{path}", self.url)))
            .header("x-api-key", &self.key)
            .json(body)
            .send()
            .await?;
        let status = resp.status();
        let reply: Value = resp.json().await?;
        ensure!(status.is_success(), "{path}: {status} {reply}");
        Ok(reply)
    }

    fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    /// The log's growth since `from` (bytes): its REPORT lines' invocations, billed
    /// milliseconds and GB-seconds.
    fn grown_since(&self, from: u64) -> anyhow::Result<Grown> {
        let text = std::fs::read(&self.log).context("the ingest function's log")?;
        let new = String::from_utf8_lossy(&text[from as usize..]).into_owned();
        let mut g = Grown {
            bytes: new.len() as u64,
            ..Grown::default()
        };
        for line in new.lines().filter(|l| l.starts_with("REPORT ")) {
            let field = |name: &str| -> Option<f64> {
                let rest = line.split(name).nth(1)?;
                rest.trim().split(' ').next()?.parse().ok()
            };
            let billed = field("Billed Duration:").context("a REPORT's billed duration")?;
            let memory = field("Memory Size:").context("a REPORT's memory size")?;
            g.invocations += 1;
            g.billed_ms += billed as u64;
            g.gb_seconds += billed / 1000.0 * memory / 1024.0;
        }
        Ok(g)
    }

    /// What `op` cost in requests, invocations, GB-seconds and log bytes, and its time.
    async fn measure<F>(&self, requests: usize, op: F) -> anyhow::Result<(Grown, f64)>
    where
        F: std::future::Future<Output = anyhow::Result<()>>,
    {
        let from = self.log_len();
        let started = Instant::now();
        op.await?;
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        // A process may still be writing its last line after its reply went out.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let grown = self.grown_since(from)?;
        ensure!(
            grown.invocations == requests as u64,
            "{requests} requests, {} invocations reported",
            grown.invocations
        );
        Ok((grown, ms))
    }
}

fn players(round: usize, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"player_id": format!("r{round}p{i:03}"), "score": 1000 + (round * 7 + i * 13) % 900}))
        .collect()
}

/// The match as one request, and as one `POST /scores` body per player.
fn bodies(game: &str, match_id: &str, players: &[Value]) -> (Value, Vec<Value>) {
    let whole = json!({"game": game, "mode": "duo", "region": "EU", "match_id": match_id, "players": players});
    let each = (players.iter())
        .map(|p| {
            json!({"game": game, "mode": "duo", "region": "EU", "match_id": match_id,
                   "player_id": p["player_id"], "score": p["score"]})
        })
        .collect();
    (whole, each)
}

async fn one_by_one(stack: &Stack, each: Vec<Value>) -> anyhow::Result<()> {
    stream::iter(each)
        .map(|body| async move { stack.post("/scores", &body).await.map(drop) })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

fn family(game: &str) -> Value {
    json!({"game": game, "mode": "duo", "policy": "BEST", "regions": ["EU"],
           "periods": ["ALL_TIME", "WEEKLY", "DAILY"]})
}

/// Runs both ways `rounds` times each; see the module docs.
pub async fn run(
    redis_url: &str,
    meter_url: &str,
    api: (String, String, PathBuf),
    rounds: usize,
) -> anyhow::Result<MatchesResults> {
    let (url, key, dir) = api;
    let stack = Stack {
        http: leaderboard::adapters::tls::http().build()?,
        url: url.trim_end_matches('/').to_owned(),
        key,
        log: dir.join("IngestFunction.log"),
    };
    let game = format!("bm{}", chrono::Utc::now().timestamp_millis());
    stack.post("/families", &family(&game)).await?;
    let mut out = MatchesResults {
        rounds,
        small_players: SMALL,
        large_players: LARGE,
        ..MatchesResults::default()
    };
    let (mut whole, mut single) = (Side::default(), Side::default());
    let add = |side: &mut Side, g: Grown, requests: usize| {
        side.api_requests += requests as f64 / rounds as f64;
        side.invocations += g.invocations as f64 / rounds as f64;
        side.billed_ms += g.billed_ms as f64 / rounds as f64;
        side.lambda_gb_seconds += g.gb_seconds / rounds as f64;
        side.log_bytes += g.bytes as f64 / rounds as f64;
    };
    let (mut large_whole, mut large_single) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (body, _) = bodies(&game, &format!("s{round}"), &players(round, SMALL));
        let (_, each) = bodies(&game, &format!("t{round}"), &players(round + 500, SMALL));
        let (g, _) = stack
            .measure(1, async { stack.post("/matches", &body).await.map(drop) })
            .await?;
        add(&mut whole, g, 1);
        let (g, _) = stack.measure(SMALL, one_by_one(&stack, each)).await?;
        add(&mut single, g, SMALL);
        // The large match, whichever way goes first alternating.
        let (body, _) = bodies(&game, &format!("w{round}"), &players(round + 1000, LARGE));
        let (_, each) = bodies(&game, &format!("x{round}"), &players(round + 2000, LARGE));
        let a = async {
            stack
                .measure(1, async { stack.post("/matches", &body).await.map(drop) })
                .await
        };
        let b = async { stack.measure(LARGE, one_by_one(&stack, each)).await };
        let (wa, wb) = if round % 2 == 0 {
            let wa = a.await?.1;
            (wa, b.await?.1)
        } else {
            let wb = b.await?.1;
            (a.await?.1, wb)
        };
        large_whole.push(std::time::Duration::from_secs_f64(wa / 1000.0));
        large_single.push(std::time::Duration::from_secs_f64(wb / 1000.0));
        println!("round {round}: 100 players in {wa:.0} ms as one request, {wb:.0} ms one by one");
    }
    let units = dynamodb_units(redis_url, meter_url).await?;
    (whole.write_units_per_player, whole.read_units_per_player) = per_player(units.0);
    (single.write_units_per_player, single.read_units_per_player) = per_player(units.1);
    out.requests_ratio = whole.api_requests / single.api_requests;
    out.gb_seconds_ratio = whole.lambda_gb_seconds / single.lambda_gb_seconds;
    out.log_bytes_ratio = whole.log_bytes / single.log_bytes;
    (out.small_whole, out.small_per_player) = (whole, single);
    out.large_whole_ms_p50 = Summary::of(large_whole).p50_us / 1000.0;
    out.large_per_player_ms_p50 = Summary::of(large_single).p50_us / 1000.0;
    out.large_time_ratio = out.large_whole_ms_p50 / out.large_per_player_ms_p50;
    Ok(out)
}

fn per_player(b: Bill) -> (f64, f64) {
    (b.write_units / SMALL as f64, b.read_units / SMALL as f64)
}

/// The DynamoDB bill of a 10-player match both ways, in process through the meter: the
/// whole match, then the same ten results (new match ids) one player at a time.
async fn dynamodb_units(redis_url: &str, meter_url: &str) -> anyhow::Result<(Bill, Bill)> {
    let meter = Meter {
        http: leaderboard::adapters::tls::http().build()?,
        url: meter_url.trim_end_matches('/').to_owned(),
    };
    let table = format!("matches-{}", chrono::Utc::now().timestamp_millis());
    let ctx = context(redis_url, meter_url, &table).await?;
    ctx.store.create_table().await.context("create the table")?;
    let game = format!("bu{}", chrono::Utc::now().timestamp_millis());
    let req: CreateFamily = serde_json::from_value(family(&game))?;
    create_family(&ctx.store, req).await?;
    // A first match of other players creates the boards, so both ways find them.
    let warm = |m: &str, round| bodies(&game, m, &players(round, SMALL));
    let first = serde_json::from_value(warm("warm", 90).0)?;
    let outcomes = submit_whole_match(&ctx, WholeMatch::new(first)?).await?;
    ensure!(
        outcomes.iter().all(|(_, o)| o.is_ok()),
        "every player recorded"
    );
    let (body, _) = warm("u1", 91);
    let whole = meter
        .bill(async {
            submit_whole_match(&ctx, WholeMatch::new(serde_json::from_value(body)?)?).await?;
            Ok(())
        })
        .await?;
    let (_, each) = warm("u2", 92);
    let single = meter
        .bill(async {
            for body in each {
                let body: MatchBody = serde_json::from_value(body)?;
                submit_match(&ctx, MatchResult::new(body)?).await?;
            }
            Ok(())
        })
        .await?;
    Ok((whole, single))
}

/// The rows as a Markdown table, with the command that made them.
pub fn markdown(r: &MatchesResults, command: &str) -> String {
    let (a, b) = (&r.small_whole, &r.small_per_player);
    let row = |what: &str, x: f64, y: f64, digits: usize| {
        format!("| {what} | {x:.digits$} | {y:.digits$} | {:.3} |\n", x / y)
    };
    let mut md = format!(
        "# A whole match in one request\n\n`{command}`: {} rounds on one local stack of release \
         binaries, each way in turn.\n\n## A {}-player match, per match\n\n\
         | | `POST /matches` | {} x `POST /scores` | ratio |\n|---|---:|---:|---:|\n",
        r.rounds, r.small_players, r.small_players
    );
    let rows = [
        ("API requests", a.api_requests, b.api_requests, 0),
        ("Lambda invocations", a.invocations, b.invocations, 0),
        ("billed ms", a.billed_ms, b.billed_ms, 1),
        (
            "Lambda GB-seconds",
            a.lambda_gb_seconds,
            b.lambda_gb_seconds,
            5,
        ),
        (
            "log bytes (START, END, REPORT and the function's own)",
            a.log_bytes,
            b.log_bytes,
            0,
        ),
        (
            "DynamoDB write units per player",
            a.write_units_per_player,
            b.write_units_per_player,
            2,
        ),
        (
            "DynamoDB read units per player",
            a.read_units_per_player,
            b.read_units_per_player,
            2,
        ),
    ];
    for (what, x, y, digits) in rows {
        md += &row(what, x, y, digits);
    }
    md += &format!(
        "\n## A {}-player match, wall time (p50)\n\n| `POST /matches` | {} x `POST /scores`, {AT_ONCE} at a time | ratio |\n|---:|---:|---:|\n| {:.0} ms | {:.0} ms | {:.3} |\n",
        r.large_players,
        r.large_players,
        r.large_whole_ms_p50,
        r.large_per_player_ms_p50,
        r.large_time_ratio
    );
    md
}
