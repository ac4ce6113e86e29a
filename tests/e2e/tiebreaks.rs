//! Tie-break columns (docs/tiebreaks.md) against a model: for every policy, results on a
//! board whose ties break by a DESC then an ASC column, in few values so players tie on
//! the score, on the first column, on both and on everything. The model folds each
//! player's results itself (written from the rules in docs/tiebreaks.md, not from
//! `Policy::fold`) and orders the board; every read (the top, a walk of pages, each
//! player's rank, in every rank mode) must be the model's, from Redis (a single node and
//! a cluster) and degraded from DynamoDB.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use leaderboard_core::service::boards::{self, CreateBoard};
use leaderboard_core::service::ingest;
use leaderboard_core::service::reads::{self, Entry, PageStart, Source};
use leaderboard_core::service::write::reply::IngestReply;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::service::{Context, ServiceError};
use leaderboard_core::store::{RankIndex, ScoreStore};
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::ids::{LeaderboardId, MatchId};
use leaderboard_rules::order::RankMode;
use leaderboard_rules::time::parse_ts;
use serde_json::json;

use crate::on_both_topologies;
use crate::support::{Rng, TestEnv, amount, lb, player, score, unique};

on_both_topologies!(every_policy_ranks_ties_as_the_model_does);

/// One player's standing in the model: score, the two columns, reached-at.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Held {
    score: i64,
    subs: [i64; 2],
    at: i64,
}

/// Whether `new` beats `cur` on a BEST (`higher`) or MIN board: the score first, then
/// the first column (more is better), then the second (fewer is better).
fn beats(higher: bool, new: (i64, [i64; 2]), cur: (i64, [i64; 2])) -> bool {
    let by_score = match higher {
        true => new.0.cmp(&cur.0),
        false => cur.0.cmp(&new.0),
    };
    let by_first = new.1[0].cmp(&cur.1[0]);
    let by_second = cur.1[1].cmp(&new.1[1]);
    by_score.then(by_first).then(by_second) == Ordering::Greater
}

/// What the model's player holds after a result: `None` when it changes nothing.
fn fold(policy: Policy, cur: Option<&Held>, new: (i64, [i64; 2])) -> Option<(i64, [i64; 2])> {
    let Some(cur) = cur else {
        return Some(new);
    };
    match policy {
        Policy::Best if beats(true, new, (cur.score, cur.subs)) => Some(new),
        Policy::Min if beats(false, new, (cur.score, cur.subs)) => Some(new),
        Policy::Latest => Some(new),
        Policy::Sum if new != (0, [0, 0]) => Some((
            cur.score + new.0,
            [cur.subs[0] + new.1[0], cur.subs[1] + new.1[1]],
        )),
        _ => None,
    }
}

/// The model's board in rank order, and each row's place under every mode.
fn model_rows(policy: Policy, held: &BTreeMap<String, Held>) -> Vec<(String, Held, [u64; 3])> {
    let tuple = |h: &Held| match policy {
        Policy::Min => (-h.score, h.subs[0], -h.subs[1]),
        _ => (h.score, h.subs[0], -h.subs[1]),
    };
    let mut rows: Vec<(String, Held)> = held.iter().map(|(p, h)| (p.clone(), h.clone())).collect();
    rows.sort_by(|(pa, a), (pb, b)| {
        tuple(b)
            .cmp(&tuple(a))
            .then(a.at.cmp(&b.at))
            .then(pa.as_bytes().cmp(pb.as_bytes()))
    });
    let tuples: Vec<_> = rows.iter().map(|(_, h)| tuple(h)).collect();
    rows.into_iter()
        .enumerate()
        .map(|(i, (p, h))| {
            let better: Vec<_> = tuples.iter().filter(|t| **t > tuple(&h)).collect();
            let distinct: HashSet<_> = better.iter().collect();
            let places = [
                i as u64 + 1,
                better.len() as u64 + 1,
                distinct.len() as u64 + 1,
            ];
            (p, h, places)
        })
        .collect()
}

const MODES: [RankMode; 3] = [RankMode::Unique, RankMode::Competition, RankMode::Dense];

/// A row as the model writes it: rank, player, score, subscores.
fn row_of(e: &Entry) -> (u64, String, i64, Vec<i64>) {
    let subs = e
        .subscores
        .clone()
        .expect("a row of a board with columns shows them");
    (e.rank, e.player_id.clone(), e.score.get(), subs)
}

async fn every_policy_ranks_ties_as_the_model_does(url: &str) {
    let env = TestEnv::on(url).await;
    let degraded = match url == crate::support::redis_url() {
        true => Some(env.redis_away().await.expect("the degraded context")),
        false => None,
    };
    for (seed, policy) in [Policy::Best, Policy::Min, Policy::Latest, Policy::Sum]
        .into_iter()
        .enumerate()
    {
        let b = lb(&unique("ties"));
        let create = CreateBoard {
            dense_ranks: true,
            tiebreaks: Some(json!(["DESC", "ASC"])),
            ..CreateBoard::new(b.clone(), policy)
        };
        boards::create_board(&env.ctx.store, &env.ctx.index, create)
            .await
            .expect("the board is created");
        let held = play(&env.ctx, &b, policy, seed as u64).await;
        let want = model_rows(policy, &held);
        let tuples: HashSet<_> = want.iter().map(|(_, h, _)| (h.score, h.subs)).collect();
        let firsts: HashSet<_> = want.iter().map(|(_, h, _)| (h.score, h.subs[0])).collect();
        let scores: HashSet<_> = want.iter().map(|(_, h, _)| h.score).collect();
        assert!(
            want.len() > tuples.len() && tuples.len() > firsts.len() && firsts.len() > scores.len(),
            "{policy:?}: ties on everything, on both columns and on the first only"
        );
        check_reads(&env.ctx, &b, &want, Source::Redis, policy, 1).await;
        // DynamoDB's answers do not depend on Redis's topology: read once, and the ranks
        // of two players a mode only (each degraded rank is some 50 queries of the
        // endpoint; every ninth took the test past two minutes on a loaded machine).
        if let Some(degraded) = &degraded {
            check_reads(degraded, &b, &want, Source::Dynamodb, policy, 13).await;
        }
    }
}

/// 120 results of 20 players on `b` (scores 0-3, first column 0-2, second 0-2; SUM takes
/// -1 to 2) and four players tied on purpose, each reply checked against the model's
/// fold, with retries (the same subscores replay, others are a conflict); returns the
/// model's standings.
async fn play<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    b: &LeaderboardId,
    policy: Policy,
    seed: u64,
) -> BTreeMap<String, Held> {
    let mut rng = Rng::new(100 + seed);
    let mut held: BTreeMap<String, Held> = BTreeMap::new();
    let submit = |p: &str, m: &str, s: i64, subs: [i64; 2]| SubmitScore {
        op: Default::default(),
        board: b.clone(),
        player: player(p),
        match_id: MatchId::parse(m).unwrap(),
        score: amount(s),
        subscores: subs.iter().map(|v| score(*v)).collect(),
        event_ts: None,
        want_previous_rank: false,
        reached_at: None,
        metadata: None,
    };
    let shift = if policy == Policy::Sum { 1 } else { 0 };
    // Random results, then for sure: a full tie (a, b), a tie on the score and the first
    // column (c), on the score alone (d), whatever the policy made of the rest.
    let random = (0..120).map(|i| {
        let p = format!("p{:02}", rng.below(20));
        let s = rng.below(4) as i64 - shift;
        let subs = [rng.below(3) as i64 - shift, rng.below(3) as i64 - shift];
        (p, format!("m{i}"), s, subs)
    });
    let ties = ["a", "b", "c", "d"]
        .into_iter()
        .zip([[1, 1], [1, 1], [1, 2], [0, 0]]);
    let tied = ties.map(|(p, subs)| (format!("q-{p}"), "t1".to_owned(), 2, subs));
    for (i, (p, m, s, subs)) in random
        .collect::<Vec<_>>()
        .into_iter()
        .chain(tied)
        .enumerate()
    {
        let reply = ingest::submit_score(ctx, submit(&p, &m, s, subs))
            .await
            .expect("a result is taken");
        let next = fold(policy, held.get(&p), (s, subs));
        assert_eq!(reply.update_applied, next.is_some(), "{policy:?} {p} {m}");
        if let Some((score, subs)) = next {
            let at = parse_ts("updated_at", &json!(reply.updated_at)).unwrap();
            held.insert(p.clone(), Held { score, subs, at });
        }
        let h = &held[&p];
        assert_eq!(
            (reply.score.get(), reply.subscores.clone()),
            (h.score, Some(h.subs.to_vec()))
        );
        if i % 25 == 0 {
            retries(ctx, submit(&p, &m, s, subs), &reply).await;
            let other = [subs[0], subs[1] + 1];
            let conflict = ingest::submit_score(ctx, submit(&p, &m, s, other)).await;
            assert!(matches!(
                conflict,
                Err(ServiceError::IdempotencyConflict(_))
            ));
        }
    }
    held
}

/// A retry replays the first reply's outcome.
async fn retries<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    again: SubmitScore,
    first: &IngestReply,
) {
    let replay = ingest::submit_score(ctx, again).await.expect("a retry");
    assert!(replay.replayed);
    assert_eq!(
        (
            replay.score,
            replay.subscores.clone(),
            replay.update_applied
        ),
        (first.score, first.subscores.clone(), first.update_applied)
    );
}

/// The top, a walk of pages and every `ranks_every`-th player's rank (with its
/// neighbours), in every mode, are the model's rows, answered from `source`.
async fn check_reads<S: ScoreStore, I: RankIndex>(
    ctx: &Context<S, I>,
    b: &LeaderboardId,
    want: &[(String, Held, [u64; 3])],
    source: Source,
    policy: Policy,
    ranks_every: usize,
) {
    let signer = CursorSigner::new("tiebreak-test");
    for (m, mode) in MODES.into_iter().enumerate() {
        let model: Vec<_> = want
            .iter()
            .map(|(p, h, places)| (places[m], p.clone(), h.score, h.subs.to_vec()))
            .collect();
        let what = format!("{policy:?} {mode:?} from {source:?}");
        let top = reads::top(ctx, b, 1000, mode).await.expect("top");
        assert_eq!(top.meta.source, source, "{what}");
        assert_eq!(
            top.entries.iter().map(row_of).collect::<Vec<_>>(),
            model,
            "top {what}"
        );

        let mut walked = Vec::new();
        let mut start = PageStart::Top;
        let mut cursor;
        loop {
            let page = reads::ranks_from(ctx, &signer, b, start, 7, mode)
                .await
                .expect("page");
            assert_eq!(page.moved, 0, "{what}");
            walked.extend(page.entries.iter().map(row_of));
            let Some(next) = page.next_cursor else { break };
            cursor = next;
            start = PageStart::Cursor(&cursor);
        }
        assert_eq!(walked, model, "pages {what}");

        for (i, (p, _, _)) in want.iter().enumerate().skip(m).step_by(ranks_every) {
            let me = player(p);
            let rank = reads::rank(ctx, &Caller::default(), b, &me, 1, mode)
                .await
                .expect("rank");
            assert_eq!(rank.global_rank, model[i].0, "rank of {p} {what}");
            assert_eq!(rank.subscores, Some(model[i].3.clone()), "{what}");
            let lo = i.saturating_sub(1);
            let rows: Vec<_> = rank.neighbors.iter().map(row_of).collect();
            assert_eq!(
                rows,
                model[lo..(i + 2).min(model.len())],
                "around {p} {what}"
            );
        }
    }
}

/// Over the local stack (every reply checked against openapi.yaml): a race board ranks by
/// time (MIN, 3 decimals), then by fewest collisions, then by who got there first; a
/// family fans a result with its subscores out to every window; the refusals name
/// their field and change nothing.
#[tokio::test]
async fn over_the_stack_a_race_board_ranks_by_time_then_collisions_and_refusals_change_nothing()
-> anyhow::Result<()> {
    use crate::support::{Stack, redis_url};
    let stack = Stack::start(&redis_url()).await?;
    let lb = unique("race");
    let create = json!({"leaderboard_id": lb, "policy": "MIN", "decimals": 3,
                        "tiebreaks": ["ASC"]});
    let (status, board) = stack.post("/leaderboards", create.clone()).await?;
    assert_eq!(
        (status, &board["tiebreaks"]),
        (201, &json!(["ASC"])),
        "{board}"
    );
    assert_eq!(stack.post("/leaderboards", create.clone()).await?.0, 200);
    let mut other = create.clone();
    other["tiebreaks"] = json!(["DESC"]);
    assert_eq!(stack.post("/leaderboards", other).await?.0, 409);
    for bad in [
        json!("ASC"),
        json!(["asc"]),
        json!(["ASC", "ASC", "ASC", "ASC"]),
    ] {
        let mut body = create.clone();
        body["leaderboard_id"] = json!(unique("bad"));
        body["tiebreaks"] = bad;
        let (status, e) = stack.post("/leaderboards", body).await?;
        assert_eq!(status, 400, "{e}");
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .starts_with("tiebreaks")
        );
    }

    let lap = |p: &str, m: &str, time: f64, collisions: i64| {
        let path = format!("/leaderboards/{lb}/players/{p}/score");
        let body = json!({"new_score": time, "match_id": m, "subscores": [collisions]});
        (path, body)
    };
    for (p, m, time, collisions) in [
        ("ann", "l1", 83.417, 2),
        ("bob", "l2", 83.417, 0),
        ("cat", "l3", 83.417, 0),
        ("dan", "l4", 84.0, 0),
        ("ann", "l5", 83.417, 1),
    ] {
        let (path, body) = lap(p, m, time, collisions);
        let (status, reply) = stack.post(&path, body).await?;
        assert_eq!(status, 200, "{reply}");
        assert_eq!(
            reply["update_applied"], true,
            "{p} {m}: a better tuple applies"
        );
        assert_eq!(reply["subscores"], json!([collisions]));
    }
    // A retry replays; the same match with other subscores is a conflict.
    let (path, body) = lap("ann", "l5", 83.417, 1);
    let (_, replay) = stack.post(&path, body).await?;
    assert_eq!(
        (&replay["replayed"], &replay["subscores"]),
        (&json!(true), &json!([1]))
    );
    let (path, body) = lap("ann", "l5", 83.417, 0);
    assert_eq!(stack.post(&path, body).await?.0, 409);

    let top = format!("/leaderboards/{lb}/top?n=10&rank_mode=competition");
    let (_, before) = stack.get(&top).await?;
    let rows: Vec<_> = (before["entries"].as_array().unwrap().iter())
        .map(|e| {
            (
                e["rank"].clone(),
                e["player_id"].clone(),
                e["score"].clone(),
                e["subscores"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            (json!(1), json!("bob"), json!(83.417), json!([0])),
            (json!(1), json!("cat"), json!(83.417), json!([0])),
            (json!(3), json!("ann"), json!(83.417), json!([1])),
            (json!(4), json!("dan"), json!(84.0), json!([0])),
        ]
    );
    let (_, rank) = stack
        .get(&format!("/leaderboards/{lb}/players/ann/rank?k=1"))
        .await?;
    assert_eq!(
        (&rank["global_rank"], &rank["subscores"]),
        (&json!(3), &json!([1]))
    );

    for (subscores, status, code) in [
        (json!("1"), 400, "invalid_request"),
        (json!([1.5]), 400, "invalid_request"),
        (json!([1, 2]), 422, "subscores_mismatch"),
        (json!([]), 422, "subscores_mismatch"),
    ] {
        let (path, mut body) = lap("eve", "e1", 80.0, 0);
        body["subscores"] = subscores;
        let (got, e) = stack.post(&path, body).await?;
        assert_eq!(
            (got, e["error"]["code"].as_str()),
            (status, Some(code)),
            "{e}"
        );
    }
    let (path, mut body) = lap("eve", "e1", 80.0, 0);
    body.as_object_mut().unwrap().remove("subscores");
    assert_eq!(
        stack.post(&path, body).await?.0,
        422,
        "a board with columns needs them"
    );
    assert_eq!(
        stack.get(&top).await?.1["entries"],
        before["entries"],
        "nothing changed"
    );

    // A family fans the subscores out: every window's board shows them.
    let u = unique("g");
    let game = u[u.len().saturating_sub(30)..].to_owned();
    let family = json!({"game": game, "mode": "puzzle", "policy": "BEST", "regions": ["EU"],
                        "periods": ["ALL_TIME", "DAILY"], "tiebreaks": ["DESC", "ASC"]});
    let (status, fam) = stack.post("/families", family).await?;
    assert_eq!(
        (status, &fam["tiebreaks"]),
        (201, &json!(["DESC", "ASC"])),
        "{fam}"
    );
    let result = |p: &str, m: &str, stars: i64, moves: i64| {
        json!({"game": game, "mode": "puzzle", "region": "EU", "player_id": p,
               "match_id": m, "score": 3, "subscores": [stars, moves]})
    };
    let (status, reply) = stack.post("/scores", result("ann", "p1", 2, 40)).await?;
    assert_eq!(status, 200, "{reply}");
    let results = reply["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    assert!(
        results.iter().all(|r| r["subscores"] == json!([2, 40])),
        "{reply}"
    );
    stack.post("/scores", result("bob", "p2", 2, 35)).await?;
    let board = format!("{game}:puzzle:EU:ALL_TIME");
    let (_, top) = stack.get(&format!("/leaderboards/{board}/top")).await?;
    let order: Vec<_> = top["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["player_id"].clone())
        .collect();
    assert_eq!(
        order,
        [json!("bob"), json!("ann")],
        "fewer moves on equal stars"
    );
    let (status, e) = stack
        .post(
            "/scores",
            json!({"game": game, "mode": "puzzle", "region": "EU",
        "player_id": "cat", "match_id": "p3", "score": 3}),
        )
        .await?;
    assert_eq!(status, 200, "{e}");
    let refused = e["results"].as_array().unwrap();
    assert!(
        refused
            .iter()
            .all(|r| r["refused"]["code"] == "subscores_mismatch"),
        "{e}"
    );
    Ok(())
}
