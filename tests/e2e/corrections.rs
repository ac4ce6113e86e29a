//! An operator's correction (`op: set`, docs/corrections.md) over the local stack: the
//! standing becomes exactly the score given, on any policy; the audit trail names who
//! and why; retries replay; the stream and a rebuild from DynamoDB converge on the
//! corrected standing; `op: incr` is SUM's own.

use anyhow::Result;
use serde_json::{Value, json};

use leaderboard_rules::ids::LeaderboardId;

use crate::support::{Stack, dynamodb_url, eventually, redis_url, unique};

/// `(player, score)` of a board's top rows.
async fn top(stack: &Stack, lb: &str) -> Result<Vec<(String, i64)>> {
    let (status, top) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
    anyhow::ensure!(status == 200, "{top}");
    Ok((top["entries"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter())
    .map(|e| {
        (
            e["player_id"].as_str().unwrap_or_default().to_owned(),
            e["score"].as_i64().unwrap_or(0),
        )
    })
    .collect())
}

async fn post(stack: &Stack, lb: &str, p: &str, body: Value) -> Result<(u16, Value)> {
    stack
        .post(&format!("/leaderboards/{lb}/players/{p}/score"), body)
        .await
}

#[tokio::test]
async fn a_correction_sets_the_standing_is_audited_replays_and_survives_the_stream_and_a_rebuild()
-> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("fix");
    let (status, _) = stack
        .post("/leaderboards", json!({"leaderboard_id": lb}))
        .await?;
    assert_eq!(status, 201);
    for (p, m, s) in [
        ("alice", "m1", 100),
        ("bob", "m2", 90),
        ("alice", "m3", 120),
    ] {
        assert_eq!(
            post(&stack, &lb, p, json!({"new_score": s, "match_id": m}))
                .await?
                .0,
            200
        );
    }
    // Alice's 120 was a cheat: set to 50, below what BEST would ever keep.
    let fix = json!({"new_score": 50, "match_id": "fix-1", "op": "set",
                     "reason": "replay showed a speed hack"});
    let (status, reply) = post(&stack, &lb, "alice", fix.clone()).await?;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        (&reply["score"], &reply["previous_score"]),
        (&json!(50), &json!(120))
    );
    assert_eq!(
        (&reply["rank"], &reply["previous_rank"]),
        (&json!(2), &json!(1))
    );
    assert_eq!(
        top(&stack, &lb).await?,
        [("bob".into(), 90), ("alice".into(), 50)]
    );

    let (_, audit) = stack.get("/admin/audit?limit=10").await?;
    let mine: Vec<&Value> = (audit["records"].as_array().unwrap().iter())
        .filter(|r| r["leaderboard_id"] == json!(lb))
        .collect();
    assert_eq!(mine.len(), 1, "{audit}");
    assert_eq!(
        (
            &mine[0]["action"],
            &mine[0]["player_id"],
            &mine[0]["reason"]
        ),
        (
            &json!("set_score"),
            &json!("alice"),
            &json!("replay showed a speed hack")
        )
    );
    assert_eq!(
        (
            &mine[0]["detail"]["previous_score"],
            &mine[0]["detail"]["score"],
            &mine[0]["detail"]["match_id"]
        ),
        (&json!(120), &json!(50), &json!("fix-1"))
    );

    // A retry replays and audits nothing more; the same match without `op` conflicts.
    let (_, again) = post(&stack, &lb, "alice", fix).await?;
    assert_eq!(
        (&again["replayed"], &again["score"]),
        (&json!(true), &json!(50))
    );
    let (status, e) = post(
        &stack,
        &lb,
        "alice",
        json!({"new_score": 50, "match_id": "fix-1"}),
    )
    .await?;
    assert_eq!(
        (status, &e["error"]["code"]),
        (409, &json!("idempotency_conflict"))
    );
    // BEST goes on from the corrected standing.
    let (_, next) = post(
        &stack,
        &lb,
        "alice",
        json!({"new_score": 80, "match_id": "m4"}),
    )
    .await?;
    assert_eq!(
        (&next["update_applied"], &next["score"]),
        (&json!(true), &json!(80))
    );

    // The stream catches up with the same standings, and a rebuild from DynamoDB alone
    // gives them again.
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let board = LeaderboardId::parse(&lb)?;
    eventually(
        std::time::Duration::from_secs(10),
        "the stream applied",
        || async { Ok(env.index_vs_store(&board).await.ok()) },
    )
    .await?;
    env.wipe_index(&board).await;
    let (status, rebuilt) = stack
        .post("/admin/rebuild", json!({"leaderboard_id": lb}))
        .await?;
    assert_eq!(status, 200, "{rebuilt}");
    assert_eq!(
        top(&stack, &lb).await?,
        [("bob".into(), 90), ("alice".into(), 80)]
    );
    assert_eq!(env.assert_index_matches_store(&board).await, 2);

    let (_, audit) = stack.get("/admin/audit?limit=50").await?;
    let count = (audit["records"].as_array().unwrap().iter())
        .filter(|r| r["leaderboard_id"] == json!(lb))
        .count();
    assert_eq!(count, 1, "one correction, one record");
    Ok(())
}

#[tokio::test]
async fn incr_is_sums_own_and_a_correction_resets_a_total_and_refusals_change_nothing() -> Result<()>
{
    let stack = Stack::start(&redis_url()).await?;
    let sum = unique("pts");
    stack
        .post(
            "/leaderboards",
            json!({"leaderboard_id": sum, "policy": "SUM"}),
        )
        .await?;
    for m in ["a", "b"] {
        let (status, _) = post(
            &stack,
            &sum,
            "ann",
            json!({"new_score": 5, "match_id": m, "op": "incr"}),
        )
        .await?;
        assert_eq!(status, 200);
    }
    let reset = json!({"new_score": 3, "match_id": "c", "op": "set", "reason": "season fix"});
    assert_eq!(post(&stack, &sum, "ann", reset).await?.1["score"], 3);
    let (_, after) = post(
        &stack,
        &sum,
        "ann",
        json!({"new_score": 2, "match_id": "d"}),
    )
    .await?;
    assert_eq!(after["score"], 5, "SUM adds on from the corrected total");

    let best = stack.create_board("best").await?;
    stack.post_score(&best, "ann", "m1", 10).await?;
    for (body, status, code) in [
        (
            json!({"new_score": 5, "match_id": "x", "op": "incr"}),
            422,
            "op_not_allowed",
        ),
        (
            json!({"new_score": 5, "match_id": "x", "op": "set"}),
            400,
            "invalid_request",
        ),
        (
            json!({"new_score": 5, "match_id": "x", "reason": "why"}),
            400,
            "invalid_request",
        ),
        (
            json!({"new_score": 5, "match_id": "x", "op": "best"}),
            400,
            "invalid_request",
        ),
    ] {
        let (got, e) = post(&stack, &best, "ann", body.clone()).await?;
        assert_eq!(
            (got, e["error"]["code"].as_str()),
            (status, Some(code)),
            "{body}: {e}"
        );
    }
    assert_eq!(
        top(&stack, &best).await?,
        [("ann".into(), 10)],
        "nothing changed"
    );
    Ok(())
}
