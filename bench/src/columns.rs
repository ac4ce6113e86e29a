//! What the score columns cost: the same players, results and reads on three
//! boards that differ only in their scores: integers, two tie-break columns
//! (docs/tiebreaks.md), three decimal places (docs/decimals.md). Everything goes
//! through the service on the real adapters, so a write is the whole ingest (DynamoDB's
//! read and conditional write, the index's apply and rank) and a read is the rank or top
//! read from the index with each row's columns written out. The boards take turns, one
//! operation each, so drift in the run falls on all three alike. The integer board is
//! the baseline; each other board's p50 and p99 are reported as ratios to it.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::boards::{self, CreateBoard};
use leaderboard_core::service::ingest::submit_score;
use leaderboard_core::service::operator::Operator;
use leaderboard_core::service::reads;
use leaderboard_core::service::write::request::{ScoreBody, SubmitScore};
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankMode;
use serde::Serialize;
use serde_json::json;

use crate::board::Rng;
use crate::stats::{Summary, in_tasks};

/// One board's measurements.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnRun {
    pub label: &'static str,
    /// An improving result through the whole ingest, one at a time.
    pub write: Summary,
    /// Rank + 10 neighbours.
    pub rank: Summary,
    pub top_100: Summary,
}

/// Every board's run and the ratios to the integer board.
#[derive(Debug, Clone, Serialize)]
pub struct Columns {
    /// Players on each board.
    pub players: u64,
    pub runs: Vec<ColumnRun>,
    /// Label -> p99 of each measure over the integer board's (write, rank, top-100).
    pub p99_vs_integers: std::collections::BTreeMap<&'static str, [f64; 3]>,
    pub p50_vs_integers: std::collections::BTreeMap<&'static str, [f64; 3]>,
}

/// A board's kind of scores: how it is created and how a generated value is written.
#[derive(Clone, Copy)]
enum Kind {
    Integers,
    Tiebreaks,
    Decimals,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Integers => "integers",
            Kind::Tiebreaks => "two tie-break columns",
            Kind::Decimals => "three decimal places",
        }
    }

    fn create(self, lb: &LeaderboardId) -> CreateBoard {
        let (decimals, tiebreaks) = match self {
            Kind::Integers => (None, None),
            Kind::Tiebreaks => (None, Some(json!(["DESC", "ASC"]))),
            Kind::Decimals => (Some(3), None),
        };
        CreateBoard {
            dense_ranks: false,
            decimals,
            tiebreaks,
            ..CreateBoard::new(lb.clone(), leaderboard_rules::board::Policy::Best)
        }
    }

    /// Player `i`'s result in round `round` (a later round scores higher): its score as
    /// the API reads it and its subscores. The tie-break board's scores are few (most
    /// ranks are decided by the columns); the decimal board's are written with their
    /// three places.
    fn result(self, i: u64, round: u64) -> (String, Option<serde_json::Value>) {
        let mut rng = Rng::new(i * 7_919 + 1);
        let base = rng.below(5_000_000) + round * 5_000_000;
        match self {
            Kind::Integers => (base.to_string(), None),
            Kind::Tiebreaks => {
                let subs = json!([rng.below(100), rng.below(100_000)]);
                ((base / 50_000).to_string(), Some(subs))
            }
            Kind::Decimals => (format!("{}.{:03}", base / 1_000, base % 1_000), None),
        }
    }
}

fn submission(lb: &LeaderboardId, kind: Kind, i: u64, round: u64) -> SubmitScore {
    let (score, subscores) = kind.result(i, round);
    let body = ScoreBody {
        op: None,
        reason: None,
        subscores,
        metadata: None,
        new_score: Some(serde_json::value::RawValue::from_string(score).expect("a number")),
        match_id: Some(json!(format!("m{round}"))),
        event_ts: None,
    };
    let player = PlayerId::parse(&format!("c{i:07}")).expect("a player id");
    SubmitScore::new(lb.clone(), player, body, &Operator("bench".into())).expect("a result")
}

/// A board of `kind` with `players` first results (8 writers, not measured).
async fn loaded(ctx: &Arc<AppContext>, kind: Kind, players: u64) -> anyhow::Result<LeaderboardId> {
    let lb = LeaderboardId::parse(&format!("bench-columns-{}", kind.label().replace(' ', "-")))?;
    boards::create_board(&ctx.store, &ctx.index, kind.create(&lb)).await?;
    let (c, b) = (ctx.clone(), lb.clone());
    in_tasks(players, 8, move |i| {
        let (ctx, lb) = (c.clone(), b.clone());
        async move { Ok(submit_score(&ctx, submission(&lb, kind, i, 0)).await?) }
    })
    .await
    .with_context(|| format!("loading the {} board", kind.label()))?;
    Ok(lb)
}

/// Each of `boards`' latencies of `op`, `n` rounds, one board after the other within a
/// round (so whatever drifts during the run, a slower host or a warmer cache, falls on
/// every board alike).
async fn interleaved<F, Fut>(
    boards: &[(Kind, LeaderboardId)],
    n: u64,
    op: F,
) -> anyhow::Result<Vec<Summary>>
where
    F: Fn(Kind, LeaderboardId, u64) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let mut samples = vec![Vec::with_capacity(n as usize); boards.len()];
    for i in 0..n {
        for (k, (kind, lb)) in boards.iter().enumerate() {
            let at = Instant::now();
            op(*kind, lb.clone(), i).await?;
            samples[k].push(at.elapsed());
        }
    }
    Ok(samples.into_iter().map(Summary::of).collect())
}

/// The three boards, in a table of their own at `dynamodb_url`, indexed at `redis_url`.
pub async fn run(
    redis_url: &str,
    dynamodb_url: &str,
    players: u64,
    writes: u64,
    reads: u64,
) -> anyhow::Result<Columns> {
    let table = format!("bench-columns-{}", chrono::Utc::now().timestamp_millis());
    let ctx = crate::board::context(redis_url, dynamodb_url, &table).await?;
    ctx.store
        .create_table()
        .await
        .context("create the columns table")?;
    let ctx = Arc::new(ctx);
    let mut boards = Vec::new();
    for kind in [Kind::Integers, Kind::Tiebreaks, Kind::Decimals] {
        boards.push((kind, loaded(&ctx, kind, players).await?));
    }
    let c = &ctx;
    let write = interleaved(&boards, writes, |kind, lb, i| async move {
        let reply = submit_score(c, submission(&lb, kind, i % players, 1 + i / players)).await?;
        anyhow::ensure!(reply.update_applied, "a later round improves on the last");
        Ok(())
    })
    .await?;
    let step = (players / reads.max(1)).max(1);
    let read_rank = |_, lb, i| async move {
        let p = PlayerId::parse(&format!("c{:07}", (i * step) % players))?;
        let reply = reads::rank(c, &Caller::default(), &lb, &p, 5, RankMode::Unique).await?;
        anyhow::ensure!(reply.neighbors.len() >= 6, "{p} has neighbours");
        Ok(())
    };
    // Once unmeasured: the players' cards (no names here) are looked up in DynamoDB the
    // first time a read shows them and kept in the index after, and the boards share
    // their players, so whichever board read a player first would pay for all three.
    interleaved(&boards, reads, read_rank).await?;
    let rank = interleaved(&boards, reads, read_rank).await?;
    let top = interleaved(&boards, reads, |_, lb, _| async move {
        let reply = reads::top(c, &lb, 100, RankMode::Unique).await?;
        anyhow::ensure!(
            reply.entries.len() as u64 == players.min(100),
            "a short top"
        );
        Ok(())
    })
    .await?;
    let runs: Vec<ColumnRun> = (boards.iter().enumerate())
        .map(|(k, (kind, _))| ColumnRun {
            label: kind.label(),
            write: write[k],
            rank: rank[k],
            top_100: top[k],
        })
        .collect();
    for run in &runs {
        println!(
            "{:>28}: write p50 {:.0} us p99 {:.0} us, rank p50 {:.0} us p99 {:.0} us, top-100 p50 {:.0} us p99 {:.0} us",
            run.label,
            run.write.p50_us,
            run.write.p99_us,
            run.rank.p50_us,
            run.rank.p99_us,
            run.top_100.p50_us,
            run.top_100.p99_us
        );
    }
    let ratio = |r: &ColumnRun, base: &ColumnRun, at: fn(&Summary) -> f64| {
        [
            at(&r.write) / at(&base.write),
            at(&r.rank) / at(&base.rank),
            at(&r.top_100) / at(&base.top_100),
        ]
    };
    let base = &runs[0];
    let p99_vs_integers = (runs[1..].iter())
        .map(|r| (r.label, ratio(r, base, |s| s.p99_us)))
        .collect();
    let p50_vs_integers = (runs[1..].iter())
        .map(|r| (r.label, ratio(r, base, |s| s.p50_us)))
        .collect();
    Ok(Columns {
        players,
        p99_vs_integers,
        p50_vs_integers,
        runs,
    })
}
