//! Keyset pagination over a 2,500-player board while 500 writes land concurrently.

use leaderboard_core::store::IndexWrites;
use std::collections::HashSet;
use std::time::Duration;

use futures::future::join_all;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::reads;
use leaderboard_core::store::IndexEntry;
use leaderboard_rules::board::Policy;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{RankKey, RankMode};

use crate::support::{Rng, TestEnv, score};

const PLAYERS: u64 = 2_500;
const WRITES: u64 = 500;

fn entry(
    b: &leaderboard_rules::ids::LeaderboardId,
    dir: leaderboard_rules::order::Direction,
    p: u64,
    s: i64,
    at: i64,
    version: u64,
) -> IndexEntry {
    IndexEntry {
        metadata: None,
        board: b.clone(),
        direction: dir,
        key: RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: score(s),
            reached_at: at,
            player: format!("p{p:04}"),
        },
        version,
        expire_at: None,
        kind: leaderboard_core::store::EntryKind::Standing,
    }
}

/// Walks every page while writes land; returns the players in the order seen.
async fn walk_while_writing(policy: Policy) -> (Vec<String>, usize) {
    let env = TestEnv::new().await;
    let b = env.board(policy).await;
    let dir = policy.direction();
    // Seed the index the way the projector does (one pipelined batch), with many ties.
    let seed: Vec<_> = (0..PLAYERS)
        .map(|p| entry(&b, dir, p, (p % 500) as i64, 1_000 + (p % 7) as i64, 1))
        .collect();
    env.ctx.index.apply_many(&seed).await.unwrap();

    let signer = CursorSigner::new("test-secret");
    let writer = async {
        let mut rng = Rng::new(policy as u64 + 7);
        // In waves, so the writes interleave with the page reads. Each write is stamped
        // when it is applied, as ingest stamps reached-at at commit time.
        for wave in 0..WRITES / 25 {
            let now = leaderboard_rules::time::now_ms();
            let writes: Vec<_> = (0..25)
                .map(|i| {
                    let p = rng.below(PLAYERS);
                    // BEST: improvements (players move up). LATEST: any new score (some
                    // move down, behind the walk).
                    let s = match policy {
                        Policy::Latest => rng.below(1_000) as i64,
                        _ => 600 + rng.below(1_000) as i64,
                    };
                    entry(&b, dir, p, s, now, 2 + wave * 25 + i)
                })
                .collect();
            join_all(writes.iter().map(|e| env.ctx.index.apply(e))).await;
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    };
    let reader = async {
        let mut seen = Vec::new();
        let mut keys: Vec<(i64, String, String)> = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = 0;
        loop {
            let page = page_after(&env, &signer, &b, cursor.as_deref(), 100).await;
            pages += 1;
            for e in &page.entries {
                seen.push(e.player_id.clone());
                let z = match dir {
                    leaderboard_rules::order::Direction::Desc => -e.score.get(),
                    leaderboard_rules::order::Direction::Asc => e.score.get(),
                };
                keys.push((z, e.updated_at.clone(), e.player_id.clone()));
            }
            cursor = page.next_cursor;
            if cursor.is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(3)).await;
        }
        // In order: scores never go backwards across the whole walk.
        assert!(
            keys.windows(2).all(|w| w[0].0 <= w[1].0),
            "walk out of order"
        );
        (seen, pages)
    };
    let (_, (seen, pages)) = tokio::join!(writer, reader);
    (seen, pages)
}

/// No player twice; only players who moved during the walk may be missing.
/// The page of `limit` unique ranks of `b` after `cursor` (from the top when none).
async fn page_after(
    env: &TestEnv,
    signer: &CursorSigner,
    b: &LeaderboardId,
    cursor: Option<&str>,
    limit: u64,
) -> reads::PageReply {
    reads::ranks(&env.ctx, signer, b, cursor, limit, RankMode::Unique)
        .await
        .expect("a page")
}

fn assert_at_most_once(seen: &[String]) {
    let unique: HashSet<_> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "a player was returned twice");
    assert!(
        seen.len() as u64 >= PLAYERS - WRITES,
        "only {} players seen",
        seen.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn walking_a_best_board_under_writes_returns_each_player_at_most_once_in_order() {
    let (seen, pages) = walk_while_writing(Policy::Best).await;
    // Improving players may jump ahead of the walk and be missed; nobody else is.
    assert_at_most_once(&seen);
    assert!(pages >= 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn walking_a_latest_board_under_writes_returns_each_player_at_most_once_in_order() {
    let (seen, _) = walk_while_writing(Policy::Latest).await;
    assert_at_most_once(&seen);
}

#[tokio::test]
async fn a_walk_without_writes_returns_every_player_exactly_once_with_true_ranks() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    let dir = Policy::Best.direction();
    let seed: Vec<_> = (0..250)
        .map(|p| entry(&b, dir, p, (p % 10) as i64, 1_000, 1))
        .collect();
    env.ctx.index.apply_many(&seed).await.unwrap();
    let signer = CursorSigner::new("test-secret");
    let mut cursor = None;
    let mut ranks = Vec::new();
    loop {
        let page = page_after(&env, &signer, &b, cursor.as_deref(), 7).await;
        assert_eq!(page.total, 250);
        ranks.extend(page.entries.iter().map(|e| e.rank));
        cursor = page.next_cursor;
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(ranks, (1..=250).collect::<Vec<u64>>());
}

#[tokio::test]
async fn a_forged_or_foreign_cursor_is_refused() {
    let env = TestEnv::new().await;
    let b = env.board(Policy::Best).await;
    let other = env.board(Policy::Best).await;
    let seed: Vec<_> = (0..20)
        .map(|p| entry(&b, Policy::Best.direction(), p, p as i64, 1_000, 1))
        .collect();
    env.ctx.index.apply_many(&seed).await.unwrap();
    let signer = CursorSigner::new("test-secret");
    let page = reads::ranks(&env.ctx, &signer, &b, None, 5, RankMode::Unique)
        .await
        .unwrap();
    let cursor = page.next_cursor.unwrap();
    let invalid = |r: Result<reads::PageReply, ServiceError>| {
        matches!(r, Err(ServiceError::Domain(DomainError::InvalidCursor)))
    };
    let mut tampered = cursor.clone();
    tampered.replace_range(2..3, if &cursor[2..3] == "A" { "B" } else { "A" });
    assert!(invalid(
        reads::ranks(&env.ctx, &signer, &b, Some(&tampered), 5, RankMode::Unique).await
    ));
    assert!(invalid(
        reads::ranks(
            &env.ctx,
            &signer,
            &other,
            Some(&cursor),
            5,
            RankMode::Unique
        )
        .await
    ));
    assert!(invalid(
        reads::ranks(
            &env.ctx,
            &CursorSigner::new("x"),
            &b,
            Some(&cursor),
            5,
            RankMode::Unique
        )
        .await
    ));
    assert!(
        reads::ranks(&env.ctx, &signer, &b, Some(&cursor), 5, RankMode::Unique)
            .await
            .is_ok()
    );
}
