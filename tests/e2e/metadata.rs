//! Per-result metadata: kept with the standing when its result sets it, as
//! each policy says; shown on every read's rows from Redis (single node and cluster),
//! degraded from DynamoDB, after a rebuild and from the stream; a retry with other
//! metadata is a conflict; hostile metadata is refused with nothing stored; an erasure
//! leaves none anywhere.

use leaderboard_core::store::IndexReads;
use std::time::{Duration, Instant};

use anyhow::Result;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::ingest;
use leaderboard_core::service::projector::project;
use leaderboard_core::service::reads::{self, Entry, PageStart};
use leaderboard_core::service::rebuild::{self, RebuildRequest};
use leaderboard_core::service::repair::Reporter;
use leaderboard_core::service::write::reply::IngestReply;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::service::{ServiceError, live};
use leaderboard_core::store::{FriendsError, FriendsSource, StandingStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::RankMode;
use leaderboard_rules::profile::Metadata;
use reqwest::Method;
use serde_json::{Value, json};

use crate::on_both_topologies;
use crate::support::{Stack, TestEnv, amount, batch, dynamodb_url, eventually, player, redis_url};

/// One result with `metadata` through the ingest use case.
async fn post(
    ctx: &AppContext,
    lb: &LeaderboardId,
    p: &str,
    m: &str,
    value: i64,
    metadata: Option<Value>,
) -> Result<IngestReply, ServiceError> {
    let m = MatchId::parse(m).expect("test match id");
    let mut req = SubmitScore::plain(lb.clone(), player(p), m, amount(value));
    req.metadata = metadata.map(|v| Metadata::parse(v).expect("test metadata"));
    ingest::submit_score(ctx, req).await
}

/// (player, metadata) of each row.
fn shown(rows: &[Entry]) -> Vec<(String, Value)> {
    rows.iter()
        .map(|r| {
            let md = r.metadata.clone().map_or(Value::Null, Value::Object);
            (r.player_id.clone(), md)
        })
        .collect()
}

/// The metadata a board's one standing of `p` shows at the top of a read.
async fn top_metadata(ctx: &AppContext, lb: &LeaderboardId) -> Result<Value> {
    let top = reads::top(ctx, lb, 1, RankMode::Unique).await?;
    Ok(shown(&top.entries)[0].1.clone())
}

#[tokio::test]
async fn each_policy_keeps_the_metadata_of_the_result_that_set_the_standing_and_a_retry_must_match()
-> Result<()> {
    let env = TestEnv::new().await;
    let ctx = &env.ctx;
    // (policy, results in order, the metadata the standing keeps after each)
    let cases = [
        (
            Policy::Best,
            vec![
                (10, json!({"r": 1})),
                (5, json!({"r": 2})),
                (20, json!({"r": 3})),
                (30, Value::Null),
            ],
            vec![
                json!({"r": 1}),
                json!({"r": 1}),
                json!({"r": 3}),
                Value::Null,
            ],
        ),
        (
            Policy::Min,
            vec![
                (10, json!({"r": 1})),
                (20, json!({"r": 2})),
                (5, json!({"r": 3})),
            ],
            vec![json!({"r": 1}), json!({"r": 1}), json!({"r": 3})],
        ),
        (
            Policy::Sum,
            vec![
                (5, json!({"r": 1})),
                (7, json!({"r": 2})),
                (0, json!({"r": 3})),
            ],
            vec![json!({"r": 1}), json!({"r": 2}), json!({"r": 2})],
        ),
        (
            Policy::Latest,
            vec![
                (100, json!({"r": 1})),
                (50, json!({"r": 2})),
                (50, Value::Null),
            ],
            vec![json!({"r": 1}), json!({"r": 2}), Value::Null],
        ),
    ];
    for (policy, results, kept) in cases {
        let lb = env.board(policy).await;
        for (i, ((value, md), kept)) in results.iter().zip(&kept).enumerate() {
            let md = (!md.is_null()).then(|| md.clone());
            post(ctx, &lb, "p", &format!("m{i}"), *value, md).await?;
            assert_eq!(
                &top_metadata(ctx, &lb).await?,
                kept,
                "{policy:?} after result {i}"
            );
            let stored = ctx.store.get_standing(&lb, &player("p")).await?.unwrap();
            let stored = stored
                .metadata
                .map_or(Value::Null, |m| Value::Object(m.to_object()));
            assert_eq!(&stored, kept, "{policy:?}: DynamoDB after result {i}");
        }
    }

    // A retry of a match is answered from its receipt only with the same metadata.
    let lb = env.board(Policy::Best).await;
    let first = post(ctx, &lb, "q", "m1", 10, Some(json!({"replay": "r-1"}))).await?;
    assert!(!first.replayed);
    let again = post(ctx, &lb, "q", "m1", 10, Some(json!({"replay": "r-1"}))).await?;
    assert!(again.replayed);
    for other in [Some(json!({"replay": "r-2"})), None] {
        let refused = post(ctx, &lb, "q", "m1", 10, other.clone()).await;
        assert!(
            matches!(refused, Err(ServiceError::IdempotencyConflict(_))),
            "{other:?}: {refused:?}"
        );
    }
    assert_eq!(top_metadata(ctx, &lb).await?, json!({"replay": "r-1"}));
    Ok(())
}

/// The friends of every test player, from memory.
struct Everyone;

impl FriendsSource for Everyone {
    async fn friends_of(&self, _: &PlayerId) -> Result<Vec<PlayerId>, FriendsError> {
        Ok(["a", "b", "c", "d"].map(player).to_vec())
    }
}

/// A board of four: `a`, `c` and `d` with metadata, `b` without.
async fn four_with_metadata(ctx: &AppContext, lb: &LeaderboardId) -> Result<Vec<(String, Value)>> {
    let rows = [
        ("a", 40, json!({"car": "gt3"})),
        ("b", 30, Value::Null),
        ("c", 20, json!({"replay": "r-c", "laps": [61.2, 60.8]})),
        ("d", 10, json!({"loadout": {"w": "bow"}})),
    ];
    for (p, s, md) in &rows {
        post(ctx, lb, p, "m1", *s, (!md.is_null()).then(|| md.clone())).await?;
    }
    Ok(rows
        .iter()
        .map(|(p, _, md)| (p.to_string(), md.clone()))
        .collect())
}

/// Every read of the four shows each row's metadata as `all` says (rank reads around `b`).
async fn every_read_shows(
    ctx: &AppContext,
    lb: &LeaderboardId,
    all: &[(String, Value)],
) -> Result<()> {
    let top = reads::top(ctx, lb, 10, RankMode::Unique).await?;
    assert_eq!(shown(&top.entries), all, "top ({:?})", top.meta.source);
    let p = player("b");
    let rank = reads::rank(ctx, &Caller::default(), lb, &p, 2, RankMode::Unique).await?;
    assert_eq!(shown(&rank.neighbors), all, "rank");
    let page = reads::ranks_from(
        ctx,
        &CursorSigner::new("test-secret"),
        lb,
        PageStart::Rank(1),
        4,
        RankMode::Unique,
    )
    .await?;
    assert_eq!(shown(&page.entries), all, "ranks page");
    let list = [player("d"), player("a")];
    let rows = reads::entries(ctx, lb, &list, RankMode::Unique).await?;
    assert_eq!(
        shown(&rows.entries),
        [all[0].clone(), all[3].clone()],
        "entries"
    );
    let friends = reads::friends_rank(
        ctx,
        &Everyone,
        &Caller::default(),
        lb,
        &player("a"),
        3,
        RankMode::Unique,
    )
    .await?;
    assert_eq!(shown(&friends.neighbors), all, "friends-rank");
    Ok(())
}

async fn every_read_shows_each_rows_metadata(redis: &str) -> Result<()> {
    let env = TestEnv::on(redis).await;
    let lb = env.board(Policy::Best).await;
    let all = four_with_metadata(&env.ctx, &lb).await?;
    every_read_shows(&env.ctx, &lb, &all).await?;
    // A live view's rows too.
    let view = live::watch_top(&env.ctx, &lb, 4).await?;
    let live: Vec<(String, Value)> = view
        .push
        .rows
        .entries
        .iter()
        .map(|r| {
            (
                r.player_id.clone(),
                r.metadata.clone().map_or(Value::Null, Value::Object),
            )
        })
        .collect();
    assert_eq!(live, all, "live top");
    // Redis not answering: rows and metadata from DynamoDB.
    let down = env.redis_away().await?;
    every_read_shows(&down, &lb, &all).await?;
    Ok(())
}

on_both_topologies!(every_read_shows_each_rows_metadata);

#[tokio::test]
async fn metadata_survives_a_rebuild_and_reaches_the_index_from_the_stream() -> Result<()> {
    let env = TestEnv::new().await;
    let lb = env.board(Policy::Best).await;
    let mut all = four_with_metadata(&env.ctx, &lb).await?;
    // A better result for `b` lands in DynamoDB while Redis is away: the stream brings
    // its metadata to the index.
    let away = env.redis_away().await?;
    post(&away, &lb, "b", "m2", 35, Some(json!({"car": "late"}))).await?;
    let (retry, _) = project(
        &env.ctx.index,
        &Reporter::default(),
        batch(env.stream_records().await),
    )
    .await;
    assert!(retry.is_empty());
    all[1].1 = json!({"car": "late"});
    every_read_shows(&env.ctx, &lb, &all).await?;

    // The index wiped and rebuilt from DynamoDB: the metadata with it.
    env.wipe_index(&lb).await;
    let req = RebuildRequest {
        leaderboard_id: Some(lb.clone()),
        ..Default::default()
    };
    let report = rebuild::run(&env.ctx, req, Instant::now() + Duration::from_secs(60)).await?;
    assert!(report.done, "{report:?}");
    let top = reads::top(&env.ctx, &lb, 10, RankMode::Unique).await?;
    assert_eq!(serde_json::to_value(top.meta.source)?, "redis");
    every_read_shows(&env.ctx, &lb, &all).await?;
    Ok(())
}

#[tokio::test]
async fn metadata_over_http_refuses_hostile_input_shows_on_rows_and_goes_with_an_erasure()
-> Result<()> {
    let (stack, lb) = Stack::with_board("metadata").await?;
    let path = format!("/leaderboards/{lb}/players/ada/score");
    let hostile = [
        json!({"blob": "x".repeat(600)}),
        json!(["not", "an", "object"]),
        json!("replay-1"),
        json!(7),
    ];
    for md in hostile {
        let body = json!({"new_score": 50, "match_id": "m1", "metadata": md});
        let (status, reply) = stack.call(Method::POST, &path, Some(body)).await?;
        assert_eq!(status, 400, "{md}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("metadata"), "{md}: {message}");
    }
    let (status, _) = stack
        .get(&format!("/leaderboards/{lb}/players/ada/rank"))
        .await?;
    assert_eq!(status, 404, "a refused result stored nothing");

    let md = json!({"replay": "r-77", "car": "gt3"});
    let body = json!({"new_score": 50, "match_id": "m1", "metadata": md});
    let (status, reply) = stack.call(Method::POST, &path, Some(body)).await?;
    assert_eq!(status, 200, "{reply}");
    let (_, top) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
    assert_eq!(top["entries"][0]["metadata"], md, "{top}");

    stack.erase_player("ada").await?;
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let lb = LeaderboardId::parse(&lb)?;
    let stored = env
        .ctx
        .store
        .get_metadata(&[(lb.clone(), player("ada"))])
        .await?;
    assert_eq!(stored, [None], "DynamoDB keeps no metadata of ada");
    let held = env.ctx.index.row_metadata(&lb, &[player("ada")]).await?;
    assert_eq!(held, Some(vec![None]), "Redis keeps no metadata of ada");
    // Past the reply cache's 250 ms, no read shows it.
    eventually(
        Duration::from_secs(2),
        "the erased result gone from the top",
        || async {
            let (_, top) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
            Ok((top["total"] == 0 && !top.to_string().contains("r-77")).then_some(()))
        },
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_fanned_out_match_keeps_its_metadata_on_every_board_it_sets() -> Result<()> {
    use leaderboard_core::service::scores::{self, MatchResult};
    use leaderboard_rules::window::Period;
    let env = TestEnv::new().await;
    let (game, mode) = env
        .family(Policy::Best, &[Period::AllTime, Period::Daily], None, 0)
        .await;
    let m = MatchResult {
        subscores: Vec::new(),
        game,
        mode,
        region: "EU".into(),
        player: player("ana"),
        match_id: MatchId::parse("m1")?,
        score: amount(70),
        event_ts: None,
        metadata: Some(Metadata::parse(json!({"replay": "fan-1"}))?),
    };
    let reply = scores::submit_match(&env.ctx, m).await?;
    let boards: Vec<LeaderboardId> = reply
        .results
        .iter()
        .filter_map(|r| r.leaderboard_id.clone())
        .collect();
    assert_eq!(boards.len(), 4, "GLOBAL and EU, ALL_TIME and DAILY");
    for lb in &boards {
        assert_eq!(
            top_metadata(&env.ctx, lb).await?,
            json!({"replay": "fan-1"}),
            "{lb}"
        );
    }
    Ok(())
}
