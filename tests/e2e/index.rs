//! The Redis encoding against a real redis-server: exact order for ties, scores near
//! 2^53 and negative scores, in both directions.

use leaderboard::order::{Direction, RankKey};
use leaderboard::score::MAX_ABS_SCORE;
use leaderboard::store::{IndexEntry, RankIndex};

use crate::support::{TestEnv, lb, player, score, unique};

fn keys() -> Vec<RankKey> {
    let k = |s: i64, at: i64, p: &str| RankKey {
        score: score(s),
        reached_at: at,
        player: p.into(),
    };
    vec![
        k(MAX_ABS_SCORE, 2_000, "a"),
        k(MAX_ABS_SCORE - 1, 1_000, "b"),
        k(MAX_ABS_SCORE, 1_000, "c"),
        k(MAX_ABS_SCORE, 1_000, "b2"),
        k(-MAX_ABS_SCORE, 1_000, "d"),
        k(-MAX_ABS_SCORE + 1, 1_000, "e"),
        k(0, 5_000, "f"),
        k(0, 5_000, "F"),
        k(0, 4_999, "g"),
        k(-1, 1, "h"),
        k(1, 1_763_778_785_123, "i"),
    ]
}

#[tokio::test]
async fn redis_orders_ties_by_reached_at_then_player_and_keeps_extreme_scores_exact() {
    let env = TestEnv::new().await;
    for dir in [Direction::Desc, Direction::Asc] {
        let board = lb(&unique("order"));
        env.ctx.index.init_board(&board, None).await.unwrap();
        for key in keys() {
            let entry = IndexEntry {
                board: board.clone(),
                direction: dir,
                key,
                version: 1,
                expire_at: None,
            };
            assert!(env.ctx.index.apply(&entry).await.unwrap().applied);
        }
        let mut expected = keys();
        expected.sort_by(|a, b| a.cmp_in(b, dir));
        let (top, total) = env.ctx.index.top(&board, dir, 100).await.unwrap();
        assert_eq!(total, expected.len() as u64);
        assert_eq!(top, expected, "{dir:?}");
        // Every player's rank agrees with the reference order, scores exact.
        for (i, key) in expected.iter().enumerate() {
            let around = env
                .ctx
                .index
                .around(&board, dir, &player(&key.player), 0)
                .await
                .unwrap()
                .unwrap();
            assert_eq!(around.rank, i as u64 + 1);
            assert_eq!(around.entries, vec![key.clone()]);
        }
    }
}

#[tokio::test]
async fn an_older_version_never_replaces_a_newer_one() {
    let env = TestEnv::new().await;
    let board = lb(&unique("ver"));
    env.ctx.index.init_board(&board, None).await.unwrap();
    let entry = |s: i64, version: u64| IndexEntry {
        board: board.clone(),
        direction: Direction::Desc,
        key: RankKey {
            score: score(s),
            reached_at: 10 + version as i64,
            player: "p".into(),
        },
        version,
        expire_at: None,
    };
    assert!(env.ctx.index.apply(&entry(30, 3)).await.unwrap().applied);
    assert!(!env.ctx.index.apply(&entry(20, 2)).await.unwrap().applied);
    assert!(!env.ctx.index.apply(&entry(30, 3)).await.unwrap().applied);
    let (top, total) = env
        .ctx
        .index
        .top(&board, Direction::Desc, 10)
        .await
        .unwrap();
    assert_eq!((total, top[0].score.get()), (1, 30));
    assert!(env.ctx.index.apply(&entry(5, 4)).await.unwrap().applied);
    let (top, total) = env
        .ctx
        .index
        .top(&board, Direction::Desc, 10)
        .await
        .unwrap();
    assert_eq!(
        (total, top[0].score.get()),
        (1, 5),
        "the old member is removed, not duplicated"
    );
}
