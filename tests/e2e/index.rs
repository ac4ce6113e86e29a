//! The Redis adapter's own calls against a real redis-server and a real 3-master Redis
//! Cluster (every scenario runs on both): exact order for ties, scores near 2^53 and
//! negative scores in both directions, version checks, one call over many boards (one
//! pipeline per slot in a cluster), health, rate counters, a full rebuild, the top window
//! and page walks.

use leaderboard_core::store::{IndexReads, IndexUpkeep, IndexWrites};
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use leaderboard::adapters::redis::RedisRankIndex;
use leaderboard_core::store::{
    EntryKind, Health, IndexEntry, Place, RateCounter, RebuildStart, TOP_WINDOW,
};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode};
use leaderboard_rules::score::MAX_ABS_SCORE;
use leaderboard_rules::tiebreak::{ColumnOrder, Columns, Ties};
use redis::cluster_routing::Slot;

use crate::on_both_topologies;
use crate::support::{Rng, TestEnv, index_entry as entry, key_exists, lb, player, score, unique};

on_both_topologies!(
    ordering,
    versions,
    many_boards_in_one_call,
    rebuild_window_and_pages,
    shared_places,
    places_without_dense_ranks,
    places_with_tie_break_columns
);

/// Extremes, near-extremes, ties broken by reached-at and by player id (case counts).
fn keys() -> Vec<RankKey> {
    const KEYS: [(i64, i64, &str); 11] = [
        (MAX_ABS_SCORE, 2_000, "a"),
        (MAX_ABS_SCORE - 1, 1_000, "b"),
        (MAX_ABS_SCORE, 1_000, "c"),
        (MAX_ABS_SCORE, 1_000, "b2"),
        (-MAX_ABS_SCORE, 1_000, "d"),
        (-MAX_ABS_SCORE + 1, 1_000, "e"),
        (0, 5_000, "f"),
        (0, 5_000, "F"),
        (0, 4_999, "g"),
        (-1, 1, "h"),
        (1, 1_763_778_785_123, "i"),
    ];
    KEYS.iter()
        .map(|&(s, at, p)| RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: score(s),
            reached_at: at,
            player: p.into(),
        })
        .collect()
}

/// Ties go by reached-at then player id; extreme scores stay exact.
async fn ordering(url: &str) {
    let env = TestEnv::on(url).await;
    for dir in [Direction::Desc, Direction::Asc] {
        let board = lb(&unique("order"));
        env.ctx.index.init_board(&board, None, true).await.unwrap();
        for key in keys() {
            let entry = IndexEntry {
                metadata: None,
                board: board.clone(),
                direction: dir,
                key,
                version: 1,
                expire_at: None,
                kind: leaderboard_core::store::EntryKind::Standing,
            };
            assert!(env.ctx.index.apply(&entry).await.unwrap().applied);
        }
        let mut expected = keys();
        expected.sort_by(|a, b| a.cmp_in(b, dir));
        let (top, total) = env
            .ctx
            .index
            .top(BoardOrder::new(&board, dir), 100)
            .await
            .unwrap();
        assert_eq!(total, expected.len() as u64);
        assert_eq!(top, expected, "{dir:?}");
        // Every player's rank agrees with the reference order, scores exact.
        for (i, key) in expected.iter().enumerate() {
            let around = env
                .ctx
                .index
                .around(
                    BoardOrder::new(&board, dir),
                    &player(&key.player),
                    0,
                    RankMode::Unique,
                )
                .await
                .unwrap()
                .unwrap();
            assert_eq!(around.rank, i as u64 + 1);
            assert_eq!(around.entries, vec![key.clone()]);
        }
    }
}

/// An older version never replaces a newer one.
async fn versions(url: &str) {
    let env = TestEnv::on(url).await;
    let board = lb(&unique("ver"));
    env.ctx.index.init_board(&board, None, true).await.unwrap();
    let entry = |s: i64, version: u64| IndexEntry {
        metadata: None,
        board: board.clone(),
        direction: Direction::Desc,
        key: RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: score(s),
            reached_at: 10 + version as i64,
            player: "p".into(),
        },
        version,
        expire_at: None,
        kind: leaderboard_core::store::EntryKind::Standing,
    };
    let index = &env.ctx.index;
    assert!(index.apply(&entry(30, 3)).await.unwrap().applied);
    assert!(!env.ctx.index.apply(&entry(20, 2)).await.unwrap().applied);
    assert!(!env.ctx.index.apply(&entry(30, 3)).await.unwrap().applied);
    let (top, total) = index
        .top(BoardOrder::new(&board, Direction::Desc), 10)
        .await
        .unwrap();
    assert_eq!((total, top[0].score.get()), (1, 30));
    assert!(env.ctx.index.apply(&entry(5, 4)).await.unwrap().applied);
    let (top, total) = index
        .top(BoardOrder::new(&board, Direction::Desc), 10)
        .await
        .unwrap();
    assert_eq!(
        (total, top[0].score.get()),
        (1, 5),
        "the old member is removed, not duplicated"
    );
    // A write-through that races a removal and loses to its tombstone: not applied, and
    // the player is not on the board (an answer, not an index failure); the same in a
    // batch from the stream. A newer result starts the player over.
    let removal = IndexEntry::removal(
        &board,
        Direction::Desc,
        &leaderboard_rules::ids::PlayerId::parse("p").unwrap(),
        10,
        None,
        EntryKind::Removed,
    );
    assert!(index.apply(&removal).await.unwrap().applied);
    let behind = index.apply(&entry(40, 8)).await.unwrap();
    assert_eq!(
        (behind.applied, behind.place, behind.health),
        (false, None, Health::Ready)
    );
    let batch = index
        .apply_many(&[entry(41, 9), entry(42, 7)])
        .await
        .unwrap();
    assert_eq!(batch.applied, [false, false]);
    assert!(batch.unready.is_empty());
    assert_eq!(
        index
            .top(BoardOrder::new(&board, Direction::Desc), 10)
            .await
            .unwrap()
            .1,
        0
    );
    let again = index.apply(&entry(50, 11)).await.unwrap();
    assert_eq!(
        (again.applied, again.place),
        (true, Some(Place { rank: 1, total: 1 }))
    );
}

fn adapter(url: &str) -> RedisRankIndex {
    let prefix = format!("{}:", unique("ix"));
    crate::support::rank_index(url, &prefix, Duration::from_secs(2))
}

/// One `apply_many` over 24 boards (spread over many slots), with repeats and stale
/// versions interleaved; then health and rate counters over many keys.
async fn many_boards_in_one_call(url: &str) {
    let index = adapter(url);
    let boards: Vec<LeaderboardId> = (0..24).map(|i| lb(&format!("many-{i}"))).collect();
    let slots: HashSet<Slot> = boards
        .iter()
        .map(|b| Slot::for_key(index.keys(b).0))
        .collect();
    assert!(slots.len() > 10, "the boards spread over many slots");
    for b in &boards[..20] {
        index.init_board(b, None, true).await.unwrap();
    }
    let mut rng = Rng::new(7);
    let mut batch = Vec::new();
    let mut newest: BTreeMap<(usize, String), (u64, i64)> = BTreeMap::new();
    let mut expected_flags = Vec::new();
    for _ in 0..600 {
        let b = rng.below(24) as usize;
        let p = format!("p{}", rng.below(15));
        let version = 1 + rng.below(6);
        let s = rng.below(10_000) as i64;
        let slot = newest.entry((b, p.clone())).or_insert((0, 0));
        expected_flags.push(version > slot.0);
        if version > slot.0 {
            *slot = (version, s);
        }
        batch.push(entry(&boards[b], &p, s, version));
    }
    let applied = index.apply_many(&batch).await.unwrap();
    assert_eq!(
        applied.applied, expected_flags,
        "applied exactly the newer versions, in order"
    );
    for (i, b) in boards.iter().enumerate() {
        let mut want: Vec<RankKey> = newest
            .iter()
            .filter(|((bi, _), _)| *bi == i)
            .map(|((_, p), (version, s))| entry(b, p, *s, *version).key)
            .collect();
        want.sort_by(|x, y| x.cmp_in(y, Direction::Desc));
        match index.top(BoardOrder::new(b, Direction::Desc), 100).await {
            Ok((top, total)) => assert_eq!((top, total), (want.clone(), want.len() as u64)),
            // Never initialized: applied entries are kept, but reads are refused.
            Err(e) => assert!(i >= 20, "board {i}: {e}"),
        }
    }

    let health = index.health(&boards).await.unwrap();
    assert!(
        health[..20].iter().all(|h| *h == Health::Ready),
        "{health:?}"
    );
    assert!(
        health[20..].iter().all(|h| *h == Health::Missing),
        "{health:?}"
    );

    let counters: Vec<String> = (0..12).map(|i| format!("p:caller-{i}")).collect();
    let first = index.hit(&counters, Duration::from_secs(5)).await.unwrap();
    let second = index.hit(&counters, Duration::from_secs(5)).await.unwrap();
    assert!(
        first
            .iter()
            .all(|(n, ttl)| *n == 1 && *ttl > 0 && *ttl <= 5_000),
        "{first:?}"
    );
    assert!(second.iter().all(|(n, _)| *n == 2), "{second:?}");
}

/// A rebuild of 1,500 players (begin, load in pages, finish), then the top window, a
/// page walk over the whole board and a lookup of chosen players.
async fn rebuild_window_and_pages(url: &str) {
    let index = adapter(url);
    let b = lb("rebuilt");
    let entries: Vec<IndexEntry> = (0..1_500)
        .map(|i| entry(&b, &format!("p{i:04}"), (i * 37 % 1_500) as i64, 1))
        .collect();
    assert!(!index.begin_rebuild(&b, "gen-1", fresh(true)).await.unwrap());
    assert_eq!(
        index.health(std::slice::from_ref(&b)).await.unwrap(),
        [Health::Rebuilding]
    );
    for page in entries.chunks(400) {
        index.load(&b, page).await.unwrap();
    }
    assert!(index.finish_rebuild(&b, "gen-1", None).await.unwrap());
    let mut want: Vec<RankKey> = entries.iter().map(|e| e.key.clone()).collect();
    want.sort_by(|x, y| x.cmp_in(y, Direction::Desc));

    let window = index
        .top_window(BoardOrder::new(&b, Direction::Desc), None, 0, false)
        .await
        .unwrap();
    assert_eq!(window.total, 1_500);
    assert_eq!(
        window.entries.as_deref(),
        Some(&want[..TOP_WINDOW as usize])
    );
    let same = index
        .top_window(
            BoardOrder::new(&b, Direction::Desc),
            Some(&window.version),
            0,
            false,
        )
        .await
        .unwrap();
    assert!(
        same.entries.is_none(),
        "an unchanged window is not sent again"
    );

    let mut walked = Vec::new();
    let mut after: Option<RankKey> = None;
    loop {
        let page = index
            .page(
                BoardOrder::new(&b, Direction::Desc),
                after.as_ref().into(),
                250,
                RankMode::Unique,
            )
            .await
            .unwrap();
        assert_eq!((page.before as usize, page.total), (walked.len(), 1_500));
        if page.entries.is_empty() {
            break;
        }
        after = page.entries.last().cloned();
        walked.extend(page.entries);
    }
    assert_eq!(walked, want);

    let picks = [player("p0000"), player("p0999"), player("nobody")];
    let (keys, _) = index
        .keys_of(BoardOrder::new(&b, Direction::Desc), &picks)
        .await
        .unwrap();
    assert_eq!(keys[0].as_ref().map(|k| k.score.get()), Some(0));
    assert_eq!(keys[1].as_ref().map(|k| k.player.as_str()), Some("p0999"));
    assert!(keys[2].is_none());
}

/// Each key's place under `mode` counted the long way, for a descending board in rank
/// order: one more than the keys (competition) or the distinct scores with their
/// tie-break values (dense) strictly better, compared as plain values.
fn model_places(mode: RankMode, ranked: &[RankKey]) -> Vec<u64> {
    let columns = Columns::new(&TIE_COLUMNS).unwrap();
    // (score, then each column with DESC columns negated): higher is better.
    let value = |k: &RankKey| {
        let ties = columns.values(&k.ties).unwrap_or_default();
        let mut v = vec![k.score.get()];
        for (order, t) in TIE_COLUMNS.iter().zip(ties) {
            v.push(if *order == ColumnOrder::Desc { t } else { -t });
        }
        v
    };
    ranked
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let above: Vec<Vec<i64>> = ranked.iter().map(value).filter(|s| *s > value(k)).collect();
            let distinct: HashSet<Vec<i64>> = above.iter().cloned().collect();
            match mode {
                RankMode::Unique => i as u64 + 1,
                RankMode::Competition => above.len() as u64 + 1,
                RankMode::Dense => distinct.len() as u64 + 1,
            }
        })
        .collect()
}

/// Shared places stay exact while scores move on and off shared values (a score's last
/// holder leaving it must drop it from the distinct scores), through a rebuild that
/// loads a snapshot while newer writes land; a board that lost its distinct scores
/// (evicted) turns stale rather than answer a wrong dense place.
async fn shared_places(url: &str) {
    let (index, b, want) = places_through_a_rebuild(
        url,
        Keeps {
            dense_ranks: true,
            ties: false,
        },
    )
    .await;

    // The distinct scores evicted: dense reads refuse and the board needs a rebuild.
    let mut raw = crate::support::raw_redis(url).await;
    let _: () = redis::cmd("DEL")
        .arg(index.distinct_key(&b))
        .query_async(&mut raw)
        .await
        .unwrap();
    dense_refused(&index, &b, &want[5], Health::Stale).await;
}

/// A dense read around `who` fails, and the board's health is then `after`.
async fn dense_refused(index: &RedisRankIndex, b: &LeaderboardId, who: &RankKey, after: Health) {
    let refused = index
        .around(
            BoardOrder::new(b, Direction::Desc),
            &player(&who.player),
            1,
            RankMode::Dense,
        )
        .await;
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(
        index.health(std::slice::from_ref(b)).await.unwrap(),
        [after]
    );
}

/// A board created without dense ranks: the same writes, rebuild and later writes as
/// `shared_places` never leave its distinct scores in Redis, unique and competition
/// places stay exact, and a dense read is refused without making the board stale. A
/// write that lands before the board's marker (its creation racing it) keeps distinct
/// scores, as an unmarked board must, and marking the board drops them.
async fn places_without_dense_ranks(url: &str) {
    let (index, b, want) = places_through_a_rebuild(
        url,
        Keeps {
            dense_ranks: false,
            ties: false,
        },
    )
    .await;
    // Refused (the script's NODENSE), not counted from nothing, and not made stale.
    dense_refused(&index, &b, &want[5], Health::Ready).await;

    let early = lb("early");
    index
        .apply_many(&[entry(&early, "p1", 5, 1)])
        .await
        .unwrap();
    assert!(distinct_kept(url, &index, &early).await);
    index.init_board(&early, None, false).await.unwrap();
    assert!(!distinct_kept(url, &index, &early).await);
    index
        .apply_many(&[entry(&early, "p1", 6, 2), entry(&early, "p2", 6, 1)])
        .await
        .unwrap();
    assert!(!distinct_kept(url, &index, &early).await);
    let around = index
        .around(
            BoardOrder::new(&early, Direction::Desc),
            &player("p1"),
            0,
            RankMode::Competition,
        )
        .await
        .unwrap()
        .expect("on the board");
    // p2 reached 6 first; p1 shares its competition place.
    assert_eq!((around.rank, around.first_place), (2, 1));
}

/// The columns of the tie-break scenario: the first DESC, the second ASC.
const TIE_COLUMNS: [ColumnOrder; 2] = [ColumnOrder::Desc, ColumnOrder::Asc];

/// Tie-break columns (docs/tiebreaks.md) through the same rounds and rebuild: scores
/// and both columns take few values, so entries tie on the score, on the first column,
/// on both, and move on and off shared tuples (a tuple's last holder leaving it must
/// drop it from the distinct tuples); every place in every mode is the model's, and the
/// same board without dense ranks serves unique and competition places alike.
async fn places_with_tie_break_columns(url: &str) {
    for dense in [true, false] {
        let (_, _, want) = places_through_a_rebuild(
            url,
            Keeps {
                dense_ranks: dense,
                ties: true,
            },
        )
        .await;
        let ties: HashSet<_> = want.iter().map(|k| (k.score, k.ties.clone())).collect();
        let scores: HashSet<_> = want.iter().map(|k| k.score).collect();
        assert!(ties.len() > 2 * scores.len(), "ties at every column");
    }
}

/// Whether the board's distinct scores are in Redis.
async fn distinct_kept(url: &str, index: &RedisRankIndex, b: &LeaderboardId) -> bool {
    let mut raw = crate::support::raw_redis(url).await;
    key_exists(&mut raw, &index.distinct_key(b)).await
}

/// What the board of [`places_through_a_rebuild`] keeps.
#[derive(Clone, Copy)]
struct Keeps {
    dense_ranks: bool,
    ties: bool,
}

/// A board (keeping dense ranks or not) after three rounds of writes over 200 players
/// and 25 scores (with `ties`, 6 scores and two tie-break columns of 3 values each), a
/// rebuild whose snapshot loads while newer writes land, and writes after it; returns
/// the index, the board and its entries in rank order. Checks that the distinct scores
/// are in Redis exactly when the board keeps dense ranks, before and after the rebuild,
/// and every place in each mode the board serves (dense only when it keeps them).
async fn places_through_a_rebuild(
    url: &str,
    Keeps { dense_ranks, ties }: Keeps,
) -> (RedisRankIndex, LeaderboardId, Vec<RankKey>) {
    let index = adapter(url);
    let b = lb("places");
    index.init_board(&b, None, dense_ranks).await.unwrap();
    let mut rng = Rng::new(7);
    let columns = Columns::new(&TIE_COLUMNS).unwrap();
    let mut newest: BTreeMap<String, (u64, i64, Ties)> = BTreeMap::new();
    let tied = |p: &str, s: i64, t: &Ties, v: u64| {
        let mut e = entry(&b, p, s, v);
        e.key.ties = t.clone();
        e
    };
    let mut version = 0;
    let mut round = |rng: &mut Rng, newest: &mut BTreeMap<String, _>, n: usize| {
        (0..n)
            .map(|_| {
                version += 1;
                let p = format!("p{:03}", rng.below(200));
                let (s, t) = match ties {
                    false => (rng.below(25) as i64, Ties::none()),
                    true => {
                        let values = [score(rng.below(3) as i64 - 1), score(rng.below(3) as i64)];
                        (rng.below(6) as i64, columns.encode(&values).unwrap())
                    }
                };
                newest.insert(p.clone(), (version, s, t.clone()));
                tied(&p, s, &t, version)
            })
            .collect::<Vec<_>>()
    };
    for _ in 0..3 {
        let batch = round(&mut rng, &mut newest, 400);
        index.apply_many(&batch).await.unwrap();
    }
    assert_eq!(distinct_kept(url, &index, &b).await, dense_ranks);
    // A rebuild loads the snapshot taken now while newer writes keep landing.
    let snapshot: Vec<IndexEntry> = newest
        .iter()
        .map(|(p, (v, s, t))| tied(p, *s, t, *v))
        .collect();
    assert!(
        !index
            .begin_rebuild(&b, "gen-1", fresh(dense_ranks))
            .await
            .unwrap()
    );
    for (i, page) in snapshot.chunks(50).enumerate() {
        let during = round(&mut rng, &mut newest, 40);
        if i % 2 == 0 {
            index.apply_many(&during).await.unwrap();
            index.load(&b, page).await.unwrap();
        } else {
            index.load(&b, page).await.unwrap();
            index.apply_many(&during).await.unwrap();
        }
    }
    assert!(index.finish_rebuild(&b, "gen-1", None).await.unwrap());
    assert_eq!(distinct_kept(url, &index, &b).await, dense_ranks);
    let after = round(&mut rng, &mut newest, 300);
    index.apply_many(&after).await.unwrap();
    assert_eq!(distinct_kept(url, &index, &b).await, dense_ranks);

    let mut want: Vec<RankKey> = newest
        .iter()
        .map(|(p, (v, s, t))| tied(p, *s, t, *v).key)
        .collect();
    want.sort_by(|x, y| x.cmp_in(y, Direction::Desc));
    let modes: &[RankMode] = match dense_ranks {
        true => &[RankMode::Unique, RankMode::Competition, RankMode::Dense],
        false => &[RankMode::Unique, RankMode::Competition],
    };
    assert_places(&index, &b, &want, modes).await;
    (index, b, want)
}

/// Every page and a sample of `around` reads place each entry as counted the long way,
/// under each of `modes`.
async fn assert_places(
    index: &RedisRankIndex,
    b: &LeaderboardId,
    want: &[RankKey],
    modes: &[RankMode],
) {
    for &mode in modes {
        let places = model_places(mode, want);
        let mut after: Option<RankKey> = None;
        let mut walked = 0;
        loop {
            let page = index
                .page(
                    BoardOrder::new(b, Direction::Desc),
                    after.as_ref().into(),
                    37,
                    mode,
                )
                .await
                .unwrap();
            let Some(last) = page.entries.last() else {
                break;
            };
            assert_eq!(
                page.first_place, places[walked],
                "{mode:?} page at {walked}"
            );
            walked += page.entries.len();
            after = Some(last.clone());
        }
        assert_eq!(walked, want.len());
        for (i, key) in want.iter().enumerate().step_by(7) {
            let around = index
                .around(
                    BoardOrder::new(b, Direction::Desc),
                    &player(&key.player),
                    2,
                    mode,
                )
                .await
                .unwrap()
                .expect("on the board");
            let lo = i.saturating_sub(2);
            assert_eq!(around.first_rank as usize, lo + 1);
            assert_eq!(
                around.first_place, places[lo],
                "{mode:?} around {}",
                key.player
            );
        }
    }
}

/// A fresh rebuild (never a resumed one), keeping dense ranks or not.
fn fresh(dense_ranks: bool) -> RebuildStart {
    RebuildStart {
        fresh: true,
        dense_ranks,
    }
}
