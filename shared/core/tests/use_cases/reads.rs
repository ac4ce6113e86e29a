//! The reads and their fallbacks: from the index when it is ready, from the store
//! (flagged degraded, same answer) when it is not, the last known answer with its age
//! when both are away; rate limits.

use leaderboard_core::service::reads::{self, Entry, Source};
use leaderboard_core::store::FriendsError;
use leaderboard_core::store::{FriendsSource, Health};
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::cursor::CursorSigner;
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::order::RankMode;

use crate::fixtures::{board, ctx, ctx_reporting, player, populate};

fn rows(entries: &[Entry]) -> Vec<(u64, String, i64)> {
    entries
        .iter()
        .map(|e| (e.rank, e.player_id.clone(), e.score.get()))
        .collect()
}

struct Friends(Vec<PlayerId>);

impl FriendsSource for Friends {
    async fn friends_of(&self, _: &PlayerId) -> Result<Vec<PlayerId>, FriendsError> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn with_the_index_away_reads_come_from_the_store_flagged_and_equal() {
    let ctx = ctx();
    let b = board(&ctx, "reads:away", Policy::Best).await;
    populate(&ctx, &b, 20).await;
    let anyone = Caller::default();
    let signer = CursorSigner::new("secret");
    let top = reads::top(&ctx, &b, 5, RankMode::Unique).await.unwrap();
    let rank = reads::rank(&ctx, &anyone, &b, &player("p07"), 2, RankMode::Unique)
        .await
        .unwrap();
    let page = reads::ranks(&ctx, &signer, &b, None, 6, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!((top.meta.source, top.meta.degraded), (Source::Redis, false));
    ctx.index.set_down(true);
    let top2 = reads::top(&ctx, &b, 5, RankMode::Unique).await.unwrap();
    let rank2 = reads::rank(&ctx, &anyone, &b, &player("p07"), 2, RankMode::Unique)
        .await
        .unwrap();
    let page2 = reads::ranks(&ctx, &signer, &b, None, 6, RankMode::Unique)
        .await
        .unwrap();
    assert_eq!(
        (top2.meta.source, top2.meta.degraded),
        (Source::Dynamodb, true)
    );
    assert!(rank2.meta.degraded && page2.meta.degraded);
    assert_eq!(
        (rows(&top2.entries), top2.total),
        (rows(&top.entries), top.total)
    );
    assert_eq!(
        (rank2.global_rank, rank2.total),
        (rank.global_rank, rank.total)
    );
    assert_eq!((rank2.global_rank, rank2.total), (13, 20));
    assert_eq!(
        (rank.percentile, rank.points_to_next.map(|p| p.get())),
        (40.0, Some(11))
    );
    assert_eq!(
        (rank2.percentile, rank2.points_to_next.map(|p| p.get())),
        (40.0, Some(11))
    );
    assert_eq!(rows(&rank2.neighbors), rows(&rank.neighbors));
    assert_eq!(rows(&page2.entries), rows(&page.entries));
    let next = reads::ranks(
        &ctx,
        &signer,
        &b,
        page2.next_cursor.as_deref(),
        6,
        RankMode::Unique,
    )
    .await
    .unwrap();
    assert_eq!(next.entries.first().map(|e| e.rank), Some(7));
}

#[tokio::test]
async fn a_board_whose_index_is_not_ready_reads_degraded_and_is_reported() {
    let (ctx, reports) = ctx_reporting();
    let b = board(&ctx, "reads:stale", Policy::Best).await;
    populate(&ctx, &b, 8).await;
    ctx.index.mark(&b, Health::Stale);
    let top = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    assert!(top.meta.degraded);
    assert_eq!(rows(&top.entries)[0], (1, "p07".to_owned(), 80));
    let taken = reports.taken();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].health, Health::Stale);
}

#[tokio::test]
async fn with_both_backends_away_the_last_answer_is_served_with_its_age() {
    let ctx = ctx();
    let b = board(&ctx, "reads:both", Policy::Best).await;
    populate(&ctx, &b, 4).await;
    let fresh = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    ctx.index.set_down(true);
    ctx.store.set_down(true);
    let stale = reads::top(&ctx, &b, 3, RankMode::Unique).await.unwrap();
    assert_eq!(stale.meta.source, Source::Cache);
    assert!(stale.meta.degraded && stale.meta.stale_ms.is_some());
    assert_eq!(rows(&stale.entries), rows(&fresh.entries));
    let never_read = reads::top(&ctx, &b, 2, RankMode::Unique).await.unwrap_err();
    assert_eq!(never_read.code(), "store_unavailable");
}

#[tokio::test]
async fn friends_rank_places_the_player_among_friends_who_have_a_score() {
    let ctx = ctx();
    let b = board(&ctx, "reads:friends", Policy::Best).await;
    populate(&ctx, &b, 10).await;
    let friends = Friends(vec![player("p02"), player("p08"), player("nobody")]);
    let r = reads::friends_rank(
        &ctx,
        &friends,
        &Caller::default(),
        &b,
        &player("p05"),
        5,
        RankMode::Unique,
    )
    .await
    .unwrap();
    assert_eq!((r.friends_rank, r.friends_total), (Some(2), 3));
    let names: Vec<_> = r.neighbors.iter().map(|e| e.player_id.as_str()).collect();
    assert_eq!(names, ["p08", "p05", "p02"]);
}

#[tokio::test]
async fn a_caller_past_the_limit_is_refused_with_rate_limited() {
    let ctx = ctx();
    let me = Caller {
        player: Some(player("alice")),
        ip: None,
    };
    let limit = ctx.settings.rate_limits.per_player;
    for _ in 0..limit {
        reads::admit(&ctx, &me).await.unwrap();
    }
    let err = reads::admit(&ctx, &me).await.unwrap_err();
    assert_eq!(err.code(), "rate_limited");
}

/// Each player's place under `mode` counted the long way: one more than the players
/// (competition) or the distinct scores (dense) strictly better; for unique, the position.
fn model(mode: RankMode, board: &[(&str, i64)]) -> Vec<(u64, String, i64)> {
    board
        .iter()
        .enumerate()
        .map(|(i, &(p, s))| {
            let better: Vec<i64> = board.iter().map(|e| e.1).filter(|&o| o > s).collect();
            let mut distinct = better.clone();
            distinct.dedup();
            let place = match mode {
                RankMode::Unique => i + 1,
                RankMode::Competition => better.len() + 1,
                RankMode::Dense => distinct.len() + 1,
            };
            (place as u64, p.to_owned(), s)
        })
        .collect()
}

#[tokio::test]
async fn shared_places_agree_with_a_model_in_every_read_from_the_index_and_the_store() {
    let ctx = leaderboard_core::memory::context();
    // In rank order: ties break by reached-at (the order written), so "a" before "b".
    let board: Vec<(&str, i64)> = vec![
        ("a", 50),
        ("b", 50),
        ("c", 40),
        ("d", 40),
        ("e", 40),
        ("f", 30),
        ("g", 20),
        ("h", 20),
        ("i", 10),
    ];
    let b = leaderboard_core::memory::seed(&ctx, "reads:modes", Policy::Best, &board).await;
    let signer = CursorSigner::new("secret");
    let anyone = Caller::default();
    let friends = Friends(["b", "d", "e", "h"].iter().map(|p| player(p)).collect());
    let group: Vec<(&str, i64)> = board
        .iter()
        .copied()
        .filter(|(p, _)| ["b", "d", "e", "h"].contains(p))
        .collect();
    for down in [false, true] {
        ctx.index.set_down(down);
        for mode in [RankMode::Unique, RankMode::Competition, RankMode::Dense] {
            let want = model(mode, &board);
            let top = reads::top(&ctx, &b, 9, mode).await.unwrap();
            assert_eq!(top.meta.degraded, down);
            assert_eq!(rows(&top.entries), want, "top {mode:?}");
            let mut walked = Vec::new();
            let mut cursor: Option<String> = None;
            loop {
                let page = reads::ranks(&ctx, &signer, &b, cursor.as_deref(), 2, mode)
                    .await
                    .unwrap();
                walked.extend(rows(&page.entries));
                match page.next_cursor {
                    Some(c) => cursor = Some(c),
                    None => break,
                }
            }
            assert_eq!(walked, want, "pages {mode:?} down={down}");
            for (i, (p, _)) in board.iter().enumerate() {
                let r = reads::rank(&ctx, &anyone, &b, &player(p), 1, mode)
                    .await
                    .unwrap();
                assert_eq!(r.global_rank, want[i].0, "{p} {mode:?} down={down}");
                let lo = i.saturating_sub(1);
                let hi = (i + 2).min(want.len());
                assert_eq!(rows(&r.neighbors), want[lo..hi], "{p} {mode:?}");
            }
            let mine = reads::friends_rank(&ctx, &friends, &anyone, &b, &player("e"), 5, mode)
                .await
                .unwrap();
            // The friends list names "e" itself: the player still counts once.
            assert_eq!(rows(&mine.neighbors), model(mode, &group), "{mode:?}");
            let e_place = model(mode, &group)[2].0;
            assert_eq!((mine.friends_rank, mine.friends_total), (Some(e_place), 4));
        }
    }
}
