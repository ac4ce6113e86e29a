//! The seeds' single-table design on PostgreSQL: one row per (board, player), ranks by
//! `ROW_NUMBER() OVER (ORDER BY score DESC, ts ASC, player ASC)`, with the index that
//! design recommends, `(board, score DESC, ts, player)`.

use std::time::Instant;

use bytes::Bytes;
use futures::SinkExt;
use serde::Serialize;
use tokio_postgres::NoTls;

use crate::board::{LoadRate, Player};
use crate::stats::{Summary, bar, measure};

#[derive(Debug, Clone, Serialize)]
pub struct PostgresResults {
    pub version: String,
    pub load: LoadRate,
    pub rank_neighbours: Summary,
    pub top_100: Summary,
}

const RANK: &str = "
WITH ranked AS (
  SELECT player, score, ts,
         ROW_NUMBER() OVER (ORDER BY score DESC, ts ASC, player ASC) AS rank
  FROM scores WHERE board = $1
), me AS (SELECT rank FROM ranked WHERE player = $2)
SELECT r.player, r.score, r.ts, r.rank FROM ranked r, me
WHERE r.rank BETWEEN me.rank - 5 AND me.rank + 5
ORDER BY r.rank";

const TOP: &str = "
SELECT player, score, ts FROM scores WHERE board = $1
ORDER BY score DESC, ts ASC, player ASC LIMIT 100";

pub async fn run(
    url: &str,
    players: &[Player],
    rank_rounds: usize,
    top_rounds: usize,
) -> anyhow::Result<PostgresResults> {
    let (client, connection) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            eprintln!("postgres connection: {e}");
        }
    });
    let version: String = client.query_one("SHOW server_version", &[]).await?.get(0);
    client
        .batch_execute(
            "DROP TABLE IF EXISTS scores;
             CREATE TABLE scores (board text NOT NULL, player text NOT NULL,
               score bigint NOT NULL, ts bigint NOT NULL, PRIMARY KEY (board, player));",
        )
        .await?;

    let bar = bar(players.len() as u64, "COPY + index (postgres)");
    let start = Instant::now();
    let sink = client
        .copy_in("COPY scores (board, player, score, ts) FROM STDIN")
        .await?;
    futures::pin_mut!(sink);
    for chunk in players.chunks(10_000) {
        let mut text = String::with_capacity(chunk.len() * 40);
        for p in chunk {
            text.push_str(&format!("bench\t{}\t{}\t{}\n", p.id, p.score, p.reached_at));
        }
        sink.send(Bytes::from(text)).await?;
        bar.inc(chunk.len() as u64);
    }
    sink.finish().await?;
    client
        .batch_execute(
            "CREATE INDEX scores_rank ON scores (board, score DESC, ts ASC, player ASC);
             ANALYZE scores;",
        )
        .await?;
    let took = start.elapsed();
    bar.finish_and_clear();
    let load = LoadRate {
        players: players.len() as u64,
        seconds: took.as_secs_f64(),
        players_per_s: players.len() as f64 / took.as_secs_f64(),
        redis_seconds: None,
    };
    println!(
        "{:>28}: {} rows in {:.2} s = {:.0} rows/s",
        "COPY + index (postgres)", load.players, load.seconds, load.players_per_s
    );

    let rank_stmt = client.prepare(RANK).await?;
    let top_stmt = client.prepare(TOP).await?;
    let step = (players.len() / rank_rounds.max(1)).max(1);
    let rank = measure("ROW_NUMBER rank (postgres)", 2, rank_rounds, |i| {
        let p = &players[(i * step + 12_345) % players.len()];
        let (client, stmt) = (&client, &rank_stmt);
        async move {
            let rows = client.query(stmt, &[&"bench", &p.id]).await?;
            anyhow::ensure!(rows.len() >= 6, "short neighbourhood");
            Ok(rows.len())
        }
    })
    .await?;
    let top = measure("top-100 (postgres)", 20, top_rounds, |_| {
        let (client, stmt) = (&client, &top_stmt);
        async move {
            let rows = client.query(stmt, &[&"bench"]).await?;
            anyhow::ensure!(rows.len() == 100, "short top");
            Ok(rows.len())
        }
    })
    .await?;
    Ok(PostgresResults {
        version,
        load,
        rank_neighbours: rank,
        top_100: top,
    })
}
