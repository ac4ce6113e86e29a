//! Rolling windows (docs/schedules.md) against a model while results age out, on the
//! local DynamoDB endpoint and redis-server. The test's clock walks five hours of
//! results on two-hour rolling boards, a few minutes at a time: results come in (some
//! late by a few minutes), the minute's sweep rolls the rows whose oldest results left,
//! and then every standing in DynamoDB, every row Redis serves and the reads degraded
//! from DynamoDB must equal a model written from the documented rule (a result counts
//! until its bucket's end is a window old), not from the code.

use std::collections::BTreeMap;

use anyhow::Result;
use serde_json::json;

use leaderboard_core::service::boards::{self, CreateFamily};
use leaderboard_core::service::{reads, rolling};
use leaderboard_core::store::BoardStore;
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::RankMode;

use crate::support::{Rng, TestEnv, unique};

const MINUTE: i64 = 60_000;
const WINDOW: i64 = 2 * 3_600_000;

/// The documented rule: a result of time `ts` counts at `now` until its one-minute
/// bucket's end is a whole window old.
fn counts(ts: i64, now: i64) -> bool {
    let bucket = ts.div_euclid(MINUTE) * MINUTE;
    now < bucket + MINUTE + WINDOW
}

/// Each player's standing at `now`: the sum (SUM) or the best (BEST) of the results
/// that count.
fn model(policy: Policy, results: &[(String, i64, i64)], now: i64) -> BTreeMap<String, i64> {
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    for (p, _, score) in results.iter().filter(|(_, ts, _)| counts(*ts, now)) {
        out.entry(p.clone())
            .and_modify(|s| {
                *s = match policy {
                    Policy::Sum => *s + score,
                    _ => (*s).max(*score),
                }
            })
            .or_insert(*score);
    }
    out
}

async fn rolling_board(env: &TestEnv, policy: Policy) -> Result<(String, LeaderboardId)> {
    let u = unique("r");
    let game = u[u.len().saturating_sub(30)..].to_owned();
    let req: CreateFamily = serde_json::from_value(json!({
        "game": game, "mode": "m", "policy": policy, "regions": ["EU"], "periods": ["ALL_TIME"],
        "schedules": [{"id": "last-2h", "rolling_seconds": WINDOW / 1000}]
    }))?;
    boards::create_family(&env.ctx.store, req).await?;
    let lb = LeaderboardId::parse(&format!("{game}:m:GLOBAL:last-2h"))?;
    Ok((game, lb))
}

#[tokio::test]
async fn rolling_sum_and_best_boards_equal_a_model_while_results_age_out() -> Result<()> {
    let env = TestEnv::new().await;
    let degraded = env.redis_away().await?;
    for (seed, policy) in [(1, Policy::Sum), (2, Policy::Best)] {
        let (game, lb) = rolling_board(&env, policy).await?;
        let fam = (game.clone(), "m".to_owned());
        let mut rng = Rng::new(seed);
        let mut results: Vec<(String, i64, i64)> = Vec::new();
        // Five simulated hours, ten hours ago, in steps of 11 minutes.
        let start = leaderboard_rules::time::now_ms() / MINUTE * MINUTE - 10 * 3_600_000;
        let mut compared = 0;
        for step in 0..28 {
            let now = start + step * 11 * MINUTE + rng.below(MINUTE as u64) as i64;
            env.ctx.clock.set(Some(now));
            // A quiet two hours and more in the middle: everyone ages out.
            let quiet = (13..25).contains(&step);
            for i in 0..if quiet { 0 } else { 3 } {
                let p = format!("p{}", rng.below(8));
                let ts = now - rng.below(4 * MINUTE as u64) as i64;
                let score = rng.below(50) as i64 + 1;
                let m = format!("m{step}-{i}");
                let reply = env
                    .submit_match(&fam, "EU", &p, &m, score, Some(ts))
                    .await?;
                let mine = reply
                    .results
                    .iter()
                    .find(|r| r.leaderboard_id.as_ref() == Some(&lb));
                assert!(
                    mine.is_some(),
                    "the rolling board took the result: {reply:?}"
                );
                results.push((p, ts, score));
            }
            let board = env
                .ctx
                .store
                .get_board(&lb)
                .await?
                .expect("the rolling board");
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            rolling::age(&env.ctx, &board, now, deadline).await?;
            let want = model(policy, &results, now);

            // DynamoDB: every row's standing.
            let rows: BTreeMap<String, i64> = (env.standings(&lb).await.into_iter())
                .map(|s| (s.player_id.to_string(), s.score.get()))
                .collect();
            assert_eq!(rows, want, "{policy:?} rows at step {step}");
            // Redis: the top, whole.
            let top = reads::top(&env.ctx, &lb, 100, RankMode::Unique).await?;
            let served: BTreeMap<String, i64> = (top.entries.iter())
                .map(|e| (e.player_id.clone(), e.score.get()))
                .collect();
            assert_eq!(served, want, "{policy:?} top at step {step}");
            assert!(
                top.entries
                    .windows(2)
                    .all(|w| w[0].score.get() >= w[1].score.get())
            );
            compared += want.len();
            if step % 10 == 9 {
                // Degraded: the same read from DynamoDB alone.
                let top = reads::top(&degraded, &lb, 100, RankMode::Unique).await?;
                let served: BTreeMap<String, i64> = (top.entries.iter())
                    .map(|e| (e.player_id.clone(), e.score.get()))
                    .collect();
                assert_eq!(served, want, "{policy:?} degraded top at step {step}");
            }
            if step == 24 {
                assert!(want.is_empty(), "the quiet hours aged everyone out");
                assert!(rows.is_empty());
            }
        }
        env.ctx.clock.set(None);
        assert!(compared > 50, "{compared} standings compared");
        // A result older than the window is refused for the rolling board alone.
        let stale = start;
        let reply = env
            .submit_match(&fam, "EU", "late", "late-1", 5, Some(stale))
            .await;
        let reply = reply?;
        let mine = reply
            .results
            .iter()
            .find(|r| r.leaderboard_id.as_ref() == Some(&lb))
            .unwrap();
        let refused = serde_json::to_value(&mine.outcome)?;
        assert_eq!(
            refused["refused"]["code"], "event_outside_window",
            "{refused}"
        );
    }
    Ok(())
}
