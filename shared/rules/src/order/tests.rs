use super::*;
use crate::score::MAX_ABS_SCORE;

#[test]
fn position_after_follows_rank_order() {
    let window: Vec<RankKey> = (0..5)
        .map(|i| test_key(&format!("p{i}"), 100 - i))
        .collect();
    assert_eq!(
        position_after(&window, Direction::Desc, &test_key("p0", 100)),
        1
    );
    assert_eq!(
        position_after(&window, Direction::Desc, &test_key("x", 97)),
        4
    );
    assert_eq!(
        position_after(&window, Direction::Desc, &test_key("p4", 96)),
        5
    );
    assert_eq!(
        position_after(&window, Direction::Desc, &test_key("a", 200)),
        0
    );
    assert_eq!(
        position_before(&window, Direction::Desc, &test_key("p1", 99)),
        1
    );
}

#[test]
fn shared_places_follow_the_same_order() {
    let keys = [
        test_key("a", 90),
        test_key("b", 80),
        test_key("c", 80),
        test_key("d", 70),
        test_key("e", 70),
        test_key("f", 60),
    ];
    let all = |mode| places(mode, Start::TOP, &keys);
    assert_eq!(all(RankMode::Unique), [1, 2, 3, 4, 5, 6]);
    assert_eq!(all(RankMode::Competition), [1, 2, 2, 4, 4, 6]);
    assert_eq!(all(RankMode::Dense), [1, 2, 2, 3, 3, 4]);
    // A slice that starts inside a tie keeps the first key's place for the tie.
    let inside = Start { rank: 3, place: 2 };
    assert_eq!(
        places(RankMode::Competition, inside, &keys[2..]),
        [2, 4, 4, 6]
    );
    assert_eq!(places(RankMode::Dense, inside, &keys[2..]), [2, 3, 3, 4]);
    assert_eq!(places(RankMode::Unique, inside, &keys[2..]), [3, 4, 5, 6]);
    assert!(places(RankMode::Dense, Start::TOP, &[]).is_empty());
}

#[test]
fn the_tie_floor_ranks_before_every_key_on_its_score() {
    let keys = [key(7, 0, "a"), key(7, 5, ""), key(8, 9, "z")];
    for dir in [Direction::Desc, Direction::Asc] {
        for k in &keys {
            let floor = tie_floor(k);
            assert!(floor.sort_key(dir) <= k.sort_key(dir));
            assert_ne!(floor.cmp_in(k, dir), Ordering::Greater);
        }
    }
    assert_eq!(RankMode::parse(None).unwrap(), RankMode::Unique);
    assert_eq!(RankMode::parse(Some("dense")).unwrap(), RankMode::Dense);
    assert!(RankMode::parse(Some("Dense")).is_err());
}

fn key(score: i64, reached_at: i64, player: &str) -> RankKey {
    RankKey {
        score: Score::new("s", score).unwrap(),
        ties: Ties::none(),
        reached_at,
        player: player.into(),
    }
}

/// Sorts the way Redis does: by the double zscore, then by member bytes.
fn redis_order(keys: &[RankKey], dir: Direction) -> Vec<RankKey> {
    let mut enc: Vec<(f64, String, &RankKey)> = keys
        .iter()
        .map(|k| (k.zscore(dir) as f64, k.member(), k))
        .collect();
    enc.sort_by(|a, b| {
        a.0.total_cmp(&b.0)
            .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
    });
    enc.into_iter().map(|(_, _, k)| k.clone()).collect()
}

fn reference_order(keys: &[RankKey], dir: Direction) -> Vec<RankKey> {
    let mut sorted = keys.to_vec();
    sorted.sort_by(|a, b| a.cmp_in(b, dir));
    sorted
}

fn sample() -> Vec<RankKey> {
    vec![
        key(MAX_ABS_SCORE, 5, "a"),
        key(MAX_ABS_SCORE - 1, 1, "a"),
        key(MAX_ABS_SCORE, 4, "b"),
        key(MAX_ABS_SCORE, 4, "a"),
        key(-MAX_ABS_SCORE, 1, "z"),
        key(-MAX_ABS_SCORE + 1, 1, "z"),
        key(0, 10, "p"),
        key(0, 10, "p2"),
        key(0, 10, "P"),
        key(0, 9, "zz"),
        key(-1, 0, "x"),
        key(1, 1_999_999_999_999, "y"),
        key(1, 200_000_000_000, "y"),
    ]
}

#[test]
fn ties_on_score_break_by_reached_at_then_player_id() {
    let keys = [
        key(7, 20, "a"),
        key(7, 10, "b"),
        key(7, 10, "a"),
        key(8, 30, "c"),
    ];
    let order = reference_order(&keys, Direction::Desc);
    let players: Vec<_> = order
        .iter()
        .map(|k| (k.player.as_str(), k.reached_at))
        .collect();
    assert_eq!(players, [("c", 30), ("a", 10), ("b", 10), ("a", 20)]);
    assert_eq!(redis_order(&keys, Direction::Desc), order);
}

#[test]
fn encoding_matches_the_documented_order_near_two_to_the_53_and_below_zero() {
    for dir in [Direction::Desc, Direction::Asc] {
        assert_eq!(
            redis_order(&sample(), dir),
            reference_order(&sample(), dir),
            "{dir:?}"
        );
    }
}

#[test]
fn adjacent_scores_near_the_limit_stay_distinct_as_doubles() {
    let a = key(MAX_ABS_SCORE, 1, "a").zscore(Direction::Desc) as f64;
    let b = key(MAX_ABS_SCORE - 1, 1, "a").zscore(Direction::Desc) as f64;
    assert!(a < b);
}

#[test]
fn entries_round_trip_through_the_encoding() {
    for dir in [Direction::Desc, Direction::Asc] {
        for k in sample() {
            let back = RankKey::from_entry(dir, &k.member(), k.zscore(dir) as f64).unwrap();
            assert_eq!(back, k);
        }
    }
}

#[test]
fn sort_keys_order_like_the_rank_order_and_round_trip() {
    for dir in [Direction::Desc, Direction::Asc] {
        let mut by_sort_key = sample();
        by_sort_key.sort_by_key(|k| k.sort_key(dir));
        assert_eq!(by_sort_key, reference_order(&sample(), dir), "{dir:?}");
        for k in sample() {
            assert_eq!(RankKey::from_sort_key(dir, &k.sort_key(dir)), Some(k));
        }
    }
}

#[test]
fn foreign_members_are_not_decoded() {
    assert!(RankKey::from_entry(Direction::Desc, "alice", 1.0).is_none());
    assert!(RankKey::from_entry(Direction::Desc, "0000000000001:a", 1.5).is_none());
}

/// Keys on a board of two columns (DESC, ASC), colliding on the score, on each
/// column and on reached-at, at the range's edges.
fn tied_sample() -> Vec<RankKey> {
    use crate::tiebreak::{ColumnOrder, Columns};
    let columns = Columns::new(&[ColumnOrder::Desc, ColumnOrder::Asc]).unwrap();
    let mut out = Vec::new();
    for score in [MAX_ABS_SCORE, 7, 0, -MAX_ABS_SCORE] {
        for first in [MAX_ABS_SCORE, 3, 0, -MAX_ABS_SCORE] {
            for second in [-MAX_ABS_SCORE, -1, 2] {
                for (at, player) in [(4, "a"), (4, "b"), (1, "z")] {
                    let values = [first, second].map(|v| Score::new("s", v).unwrap());
                    out.push(RankKey {
                        score: Score::new("s", score).unwrap(),
                        ties: columns.encode(&values).unwrap(),
                        reached_at: at,
                        player: player.into(),
                    });
                }
            }
        }
    }
    out
}

#[test]
fn ties_order_after_the_score_and_before_reached_at_in_redis_and_sort_keys() {
    for dir in [Direction::Desc, Direction::Asc] {
        let reference = reference_order(&tied_sample(), dir);
        assert_eq!(redis_order(&tied_sample(), dir), reference, "{dir:?}");
        let mut by_sort_key = tied_sample();
        by_sort_key.sort_by_key(|k| k.sort_key(dir));
        assert_eq!(by_sort_key, reference, "{dir:?}");
        for k in tied_sample() {
            let back = RankKey::from_entry(dir, &k.member(), k.zscore(dir) as f64);
            assert_eq!(back.as_ref(), Some(&k));
            assert_eq!(RankKey::from_sort_key(dir, &k.sort_key(dir)), Some(k));
        }
    }
    // The first column (DESC) decides before the second (ASC), both before time.
    let order = reference_order(&tied_sample(), Direction::Desc);
    let first = &order[0];
    assert_eq!(
        (first.score.get(), first.reached_at, first.player.as_str()),
        (MAX_ABS_SCORE, 1, "z")
    );
}

#[test]
fn shared_places_tie_only_on_the_score_and_every_column() {
    let keys = reference_order(&tied_sample(), Direction::Desc);
    let competition = places(RankMode::Competition, Start::TOP, &keys);
    let dense = places(RankMode::Dense, Start::TOP, &keys);
    for i in 1..keys.len() {
        let same = keys[i].ties_with(&keys[i - 1]);
        assert_eq!(competition[i] == competition[i - 1], same);
        assert_eq!(dense[i] == dense[i - 1], same);
        if same {
            assert_eq!(keys[i].ties, keys[i - 1].ties);
        }
        // The floor of a tuple ranks before every key of it and after every better one.
        let floor = tie_floor(&keys[i]);
        assert_eq!(
            position_before(&keys, Direction::Desc, &floor) as u64 + 1,
            competition[i]
        );
    }
    // 4 scores x 4 first values x 3 second values, 3 keys each.
    assert_eq!(*dense.last().unwrap(), 48);
}

#[test]
fn members_of_foreign_shapes_are_not_decoded() {
    assert!(RankKey::from_entry(Direction::Desc, "12:0000000000001:a", 1.0).is_none());
    assert!(RankKey::from_entry(Direction::Desc, "x0000000000001:a", 1.0).is_none());
    assert!(RankKey::from_entry(Direction::Desc, "000000000000001:a", 1.0).is_none());
    let k = RankKey::from_entry(Direction::Desc, "0000000000001:a:b", 1.0).unwrap();
    assert_eq!(k.player, "a:b");
}
