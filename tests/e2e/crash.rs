//! Crashes at every point of the write protocol (docs/cost.md), against the real
//! adapter and DynamoDB endpoint with `infra/local/meter.py` breaking one call on
//! purpose: before the row's write, after it (the reply lost), around the receipts a
//! row moves out, midway through a family's fan-out, and a writer paused between its
//! reads and its write while a ban goes through. After each, the retry answers and the
//! totals are exact: every match counted once.

use std::time::{Duration, Instant};

use leaderboard_core::service::ServiceError;
use leaderboard_core::service::moderation::ban;
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::scores::Outcome;
use leaderboard_core::store::{Consistency, INLINE_RECEIPTS, StandingStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::ids::{LeaderboardId, MatchId};
use leaderboard_rules::window::Period;

use crate::support::{Crash, CrashProxy, TestEnv, player, redis_url};

/// A test table and key prefix reached through `proxy`.
async fn env_behind(proxy: &CrashProxy) -> TestEnv {
    TestEnv::reaching(&redis_url(), &proxy.url()).await
}

async fn total(env: &TestEnv, lb: &LeaderboardId, p: &str) -> Option<i64> {
    let standing = env.ctx.store.get_standing(lb, &player(p)).await.unwrap();
    standing.map(|s| s.score.get())
}

/// Each crash point of one result on a SUM board, after five results (so the sixth
/// moves a receipt out of the row): the result fails, its retry counts it once, and
/// every earlier match still replays its own receipt.
#[tokio::test]
async fn a_result_cut_off_at_any_point_counts_once_when_retried() {
    let proxy = CrashProxy::start().await.unwrap();
    let env = env_behind(&proxy).await;
    let lb = env.board(Policy::Sum).await;
    let points = [
        ("S#", Crash::Before, false),
        ("S#", Crash::After, true),
        ("R#", Crash::Before, false),
        ("R#", Crash::After, false),
    ];
    for (i, (prefix, crash, written)) in points.into_iter().enumerate() {
        let p = format!("p{i}");
        for m in 1..=5 {
            env.submit(&lb, &p, &format!("m{m}"), m).await.unwrap();
        }
        proxy.arm("PutItem", prefix, 0, crash).await.unwrap();
        let cut = env.submit(&lb, &p, "m6", 100).await;
        assert!(
            cut.is_err(),
            "{prefix} {crash:?}: the crash reaches the caller"
        );
        assert_eq!(
            proxy.fired().await.unwrap().0,
            1,
            "{prefix} {crash:?} fired"
        );
        let retried = env.submit(&lb, &p, "m6", 100).await.unwrap();
        assert_eq!(
            (retried.replayed, retried.score.get()),
            (written, 115),
            "{prefix} {crash:?}: the retry replays only what was written"
        );
        for m in 1..=6 {
            let value = if m == 6 { 100 } else { m };
            let again = env.submit(&lb, &p, &format!("m{m}"), value).await.unwrap();
            let running = if m == 6 { 115 } else { m * (m + 1) / 2 };
            assert_eq!((again.replayed, again.score.get()), (true, running), "m{m}");
        }
        assert_eq!(total(&env, &lb, &p).await, Some(115), "{prefix} {crash:?}");
        let row = (env.ctx.store)
            .get_row(&lb, &player(&p), Consistency::Strong)
            .await
            .unwrap();
        assert_eq!(row.receipts.len(), INLINE_RECEIPTS);
        let m1 = MatchId::parse("m1").unwrap();
        assert!(row.kept_receipt(&m1).is_none(), "m1 left the row");
        let archived = env.ctx.store.get_receipt(&lb, &player(&p), &m1).await;
        assert!(
            archived.unwrap().is_some(),
            "m1's receipt was stored on its own"
        );
    }
}

/// A family's fan-out cut off after its third row: the retry writes the boards the
/// first attempt did not reach and replays the others; every board counts the match
/// once.
#[tokio::test]
async fn a_match_cut_off_midway_through_its_family_lands_on_every_board_once() {
    let proxy = CrashProxy::start().await.unwrap();
    let env = env_behind(&proxy).await;
    let periods = [Period::AllTime, Period::Weekly, Period::Daily];
    let family = env.family(Policy::Sum, &periods, None, 0).await;
    env.submit_match(&family, "EU", "ana", "m1", 10, None)
        .await
        .unwrap();
    proxy.arm("PutItem", "S#", 2, Crash::After).await.unwrap();
    let cut = env.submit_match(&family, "EU", "ana", "m2", 5, None).await;
    assert!(cut.is_err());
    for attempt in 0..2 {
        let reply = (env.submit_match(&family, "EU", "ana", "m2", 5, None).await).unwrap();
        assert_eq!(reply.results.len(), 6);
        let mut replayed = 0;
        for r in &reply.results {
            match &r.outcome {
                Outcome::Accepted {
                    score,
                    replayed: was,
                    ..
                } => {
                    assert_eq!(score.get(), 15, "{r:?}");
                    replayed += u32::from(*was);
                }
                Outcome::Refused { .. } => panic!("refused: {r:?}"),
            }
            let lb = r.leaderboard_id.as_ref().unwrap();
            assert_eq!(total(&env, lb, "ana").await, Some(15), "{lb}");
        }
        if attempt == 0 {
            // The three rows written before the crash, and any still in flight then.
            assert!((3..=6).contains(&replayed), "{replayed} replayed");
        } else {
            assert_eq!(replayed, 6);
        }
    }
}

/// A player's first result paused after its reads (rows and ban: not banned), while a
/// ban goes through and returns: released, its writes find the ban's fence and read the
/// ban again. Nothing of the player stays on any board, with or without an earlier row.
#[tokio::test]
async fn a_result_paused_before_its_write_cannot_land_after_a_ban_returns() {
    let proxy = CrashProxy::start().await.unwrap();
    let env = env_behind(&proxy).await;
    let family = env
        .family(Policy::Best, &[Period::AllTime, Period::Daily], None, 0)
        .await;
    // ana has rows on every board; bo has none anywhere.
    env.submit_match(&family, "EU", "ana", "m1", 10, None)
        .await
        .unwrap();
    let boards: Vec<LeaderboardId> = (env.submit_match(&family, "EU", "cy", "m1", 1, None).await)
        .unwrap()
        .results
        .into_iter()
        .filter_map(|r| r.leaderboard_id)
        .collect();
    assert_eq!(boards.len(), 4);
    for p in ["ana", "bo"] {
        proxy.arm("PutItem", "S#", 0, Crash::Hold).await.unwrap();
        let paused = {
            let (env, family) = (&env, &family);
            async move { env.submit_match(family, "EU", p, "m2", 50, None).await }
        };
        let banning = async {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !proxy.fired().await.unwrap().1 {
                assert!(Instant::now() < deadline, "{p}: no write was held");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            let reason = Reason::parse(ReasonBody {
                reason: Some(serde_json::json!("crash test")),
            })
            .unwrap();
            let op = Operator("arn:aws:iam::1:user/ops".into());
            let later = Instant::now() + Duration::from_secs(60);
            let reply = ban::ban(&env.ctx, &family.0, &player(p), reason, &op, None, later)
                .await
                .unwrap();
            assert!(reply.sweep.complete);
            for lb in &boards {
                assert_eq!(total(&env, lb, p).await, None, "{p} on {lb} after the ban");
            }
            proxy.release().await.unwrap();
        };
        let (result, ()) = tokio::join!(paused, banning);
        assert!(
            matches!(result, Err(ServiceError::PlayerBanned { .. })),
            "{p}: {result:?}"
        );
        for lb in &boards {
            assert_eq!(total(&env, lb, p).await, None, "{p} on {lb} in the end");
        }
    }
    // Everyone else is untouched.
    for lb in &boards {
        assert_eq!(total(&env, lb, "cy").await, Some(1));
    }
}
