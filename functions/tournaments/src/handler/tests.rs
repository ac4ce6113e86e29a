//! The tournaments handler over the in-memory twins: each route answered as the runtime calls it.

use leaderboard_core::memory;

use super::*;

leaderboard::handler_call!();

#[tokio::test]
async fn defines_joins_counts_attempts_and_reads_the_cohort() {
    let ctx = memory::context();
    let def = r#"{"tournament_id":"cup","game":"g1","mode":"race","title":"Cup",
                  "schedule":{"period":"WEEKLY"},"max_attempts":2,"cohort_size":3}"#;
    assert_eq!(call(&ctx, "POST /tournaments", &[], Some(def)).await.0, 201);
    assert_eq!(call(&ctx, "POST /tournaments", &[], Some(def)).await.0, 200);
    let other = def.replace("\"Cup\"", "\"Other\"");
    let (status, body) = call(&ctx, "POST /tournaments", &[], Some(&other)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("tournament_conflict"))
    );

    let t = [("t", "cup"), ("p", "ada")];
    let (status, body) = call(
        &ctx,
        "POST /tournaments/{t}/players/{p}/score",
        &t,
        Some(r#"{"new_score":5,"match_id":"m1"}"#),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("not_joined"))
    );
    let (status, joined) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
    assert_eq!(status, 200, "{joined}");
    assert_eq!(
        (joined["seat"].as_u64(), joined["cohort"].as_u64()),
        (Some(0), Some(0))
    );
    let (_, again) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
    assert_eq!(again["already_joined"], true);
    assert_eq!(again["seat"], joined["seat"]);

    let score = |m: &'static str, s: i64| {
        let body = format!(r#"{{"new_score":{s},"match_id":"{m}"}}"#);
        let ctx = &ctx;
        async move {
            call(
                ctx,
                "POST /tournaments/{t}/players/{p}/score",
                &t,
                Some(&body),
            )
            .await
        }
    };
    let (status, first) = score("m1", 5).await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        (
            first["attempts_used"].as_u64(),
            first["cohort"]["cohort"].as_u64()
        ),
        (Some(1), Some(0))
    );
    // A retry replays and counts nothing.
    let (_, retry) = score("m1", 5).await;
    assert_eq!(
        (retry["replayed"].as_bool(), retry["attempts_used"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(score("m2", 9).await.1["attempts_used"], 2);
    let (status, body) = score("m3", 11).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (409, Some("attempts_exhausted"))
    );
    // The refused attempt left both boards as they were.
    let (status, cohort) = call(&ctx, "GET /tournaments/{t}/players/{p}/cohort", &t, None).await;
    assert_eq!(status, 200, "{cohort}");
    assert_eq!(
        (cohort["rank"].as_u64(), cohort["members"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(cohort["entries"][0]["score"], 9);
    assert_eq!(cohort["entries"][0]["self"], true);

    let (status, got) = call(&ctx, "GET /tournaments/{t}", &t, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        (
            got["occurrence"]["players_joined"].as_u64(),
            got["occurrence"]["full"].as_bool()
        ),
        (Some(1), Some(false))
    );
    let (status, body) = call(&ctx, "GET /tournaments/{t}", &[("t", "nope")], None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("tournament_not_found"))
    );
}

#[tokio::test]
async fn a_leagues_standing_and_dry_run_routes_answer_and_refuse() {
    let ctx = memory::context();
    let def = r#"{"tournament_id":"lg","game":"g1","mode":"race","title":"League",
                  "schedule":{"period":"WEEKLY"},"cohort_size":3,
                  "league":{"tiers":[{"id":"bronze","promote":{"count":1}},
                                     {"id":"silver","demote":{"count":1}}],
                            "start_tier":"silver"}}"#;
    let (status, body) = call(&ctx, "POST /tournaments", &[], Some(def)).await;
    assert_eq!(status, 201, "{body}");
    let t = [("t", "lg"), ("p", "ada")];
    let (status, joined) = call(&ctx, "POST /tournaments/{t}/players/{p}/join", &t, None).await;
    assert_eq!(status, 200, "{joined}");
    // Silver is tier 1: its cohorts are numbered from 10,000,000.
    assert_eq!(
        (joined["tier"].as_str(), joined["cohort"].as_u64()),
        (Some("silver"), Some(10_000_000))
    );
    let (status, standing) = call(&ctx, "GET /tournaments/{t}/players/{p}/league", &t, None).await;
    assert_eq!(status, 200, "{standing}");
    assert_eq!(standing["tier"], "silver");
    assert_eq!(standing["changes"], serde_json::json!([]));

    let dry = "POST /tournaments/{t}/occurrences/{o}/league/dry-run";
    let league = r#"{"league":{"tiers":[{"id":"a"},{"id":"b"}]}}"#;
    let at = |o| [("t", "lg"), ("o", o)];
    let (status, body) = call(&ctx, dry, &at("2001-W01"), Some(league)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("board_not_found"))
    );
    let three = r#"{"league":{"tiers":[{"id":"a"},{"id":"b"},{"id":"c"}]}}"#;
    let occurrence = joined["occurrence"].as_str().unwrap();
    let (status, body) = call(&ctx, dry, &at(occurrence), Some(three)).await;
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(status, 400, "{body}");
    assert!(message.starts_with("league.tiers"), "{message}");
    // The running occurrence's cohort is not sealed yet.
    let (status, body) = call(&ctx, dry, &at(occurrence), Some(league)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("not_sealed")),
        "{body}"
    );

    let plain = r#"{"tournament_id":"cup","game":"g1","mode":"race","title":"Cup",
                    "schedule":{"period":"WEEKLY"}}"#;
    assert_eq!(
        call(&ctx, "POST /tournaments", &[], Some(plain)).await.0,
        201
    );
    let (status, body) = call(
        &ctx,
        "GET /tournaments/{t}/players/{p}/league",
        &[("t", "cup"), ("p", "ada")],
        None,
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (404, Some("no_league"))
    );
}
