use super::*;
use crate::order::Direction;

#[test]
fn boards_stored_before_the_setting_keep_dense_ranks_and_only_dense_is_refused_without() {
    let stored = serde_json::json!({
        "leaderboard_id": "b1", "policy": "BEST", "status": "ACTIVE", "created_at": 0
    });
    let mut board: Board = serde_json::from_value(stored).unwrap();
    assert!(board.dense_ranks);
    assert!(board.serves(RankMode::Dense).is_ok());
    board.dense_ranks = false;
    assert!(board.serves(RankMode::Unique).is_ok());
    assert!(board.serves(RankMode::Competition).is_ok());
    let refused = board.serves(RankMode::Dense).unwrap_err();
    assert!(refused.to_string().contains("dense_ranks"), "{refused}");
}

fn standing(score: i64, version: u64) -> Standing {
    Standing {
        metadata: None,
        score: Score::new("s", score).unwrap(),
        ties: Ties::none(),
        reached_at: 1_000,
        version,
        last_match_id: MatchId::parse("old").unwrap(),
    }
}

fn fold(policy: Policy, cur: Option<&Standing>, score: i64) -> Fold {
    let m = MatchId::parse("m").unwrap();
    policy
        .fold(
            &Columns::NONE,
            cur,
            (Score::new("s", score).unwrap(), &Ties::none()),
            &m,
            2_000,
        )
        .unwrap()
}

#[test]
fn a_fold_carries_the_results_metadata_only_when_it_sets_the_standing() {
    let md = crate::profile::Metadata::parse(serde_json::json!({"car": "gt3"})).ok();
    let cur = Standing {
        metadata: crate::profile::Metadata::parse(serde_json::json!({"car": "old"})).ok(),
        ..standing(10, 1)
    };
    match fold(Policy::Best, Some(&cur), 20).carrying(md.clone()) {
        Fold::Applied(s) => assert_eq!(s.metadata, md),
        Fold::Unchanged => panic!("a better score applies"),
    }
    // A worse result changes nothing: the standing keeps its own metadata.
    assert_eq!(
        fold(Policy::Best, Some(&cur), 5).carrying(md),
        Fold::Unchanged
    );
}

fn applied_score(f: Fold) -> Option<(i64, u64)> {
    match f {
        Fold::Applied(s) => Some((s.score.get(), s.version)),
        Fold::Unchanged => None,
    }
}

#[test]
fn first_submission_always_applies_at_version_one() {
    for p in [Policy::Best, Policy::Min, Policy::Latest, Policy::Sum] {
        assert_eq!(applied_score(fold(p, None, 7)), Some((7, 1)));
    }
}

#[test]
fn best_keeps_the_maximum_and_ties_keep_the_earlier_standing() {
    let cur = standing(10, 3);
    assert_eq!(
        applied_score(fold(Policy::Best, Some(&cur), 11)),
        Some((11, 4))
    );
    assert_eq!(fold(Policy::Best, Some(&cur), 10), Fold::Unchanged);
    assert_eq!(fold(Policy::Best, Some(&cur), -5), Fold::Unchanged);
}

#[test]
fn min_keeps_the_minimum() {
    let cur = standing(10, 1);
    assert_eq!(
        applied_score(fold(Policy::Min, Some(&cur), 9)),
        Some((9, 2))
    );
    assert_eq!(fold(Policy::Min, Some(&cur), 10), Fold::Unchanged);
}

#[test]
fn latest_always_applies() {
    let cur = standing(10, 1);
    assert_eq!(
        applied_score(fold(Policy::Latest, Some(&cur), 3)),
        Some((3, 2))
    );
}

#[test]
fn sum_accumulates_and_refuses_leaving_the_exact_range() {
    let cur = standing(10, 1);
    assert_eq!(
        applied_score(fold(Policy::Sum, Some(&cur), -4)),
        Some((6, 2))
    );
    assert_eq!(fold(Policy::Sum, Some(&cur), 0), Fold::Unchanged);
    let near = standing(crate::score::MAX_ABS_SCORE, 1);
    let m = MatchId::parse("m").unwrap();
    let one = Score::new("s", 1).unwrap();
    assert!(matches!(
        Policy::Sum.fold(&Columns::NONE, Some(&near), (one, &Ties::none()), &m, 0),
        Err(DomainError::ScoreOutOfRange { .. })
    ));
}

#[test]
fn min_boards_rank_ascending() {
    assert_eq!(Policy::Min.direction(), Direction::Asc);
    assert_eq!(Policy::Best.direction(), Direction::Desc);
}

/// Folds `(score, subscores)` on a board whose columns are DESC then ASC.
fn fold_tuple(policy: Policy, cur: Option<&Standing>, score: i64, subs: [i64; 2]) -> Fold {
    use crate::tiebreak::ColumnOrder::{Asc, Desc};
    let columns = Columns::new(&[Desc, Asc]).unwrap();
    let values: Vec<Score> = subs.iter().map(|v| Score::new("s", *v).unwrap()).collect();
    let ties = columns.encode(&values).unwrap();
    let m = MatchId::parse("m").unwrap();
    policy
        .fold(
            &columns,
            cur,
            (Score::new("s", score).unwrap(), &ties),
            &m,
            2_000,
        )
        .unwrap()
}

fn tuple_standing(policy: Policy, score: i64, subs: [i64; 2]) -> Standing {
    match fold_tuple(policy, None, score, subs) {
        Fold::Applied(s) => s,
        Fold::Unchanged => unreachable!("a first result applies"),
    }
}

fn values(f: &Fold) -> Option<(i64, Vec<i64>)> {
    use crate::tiebreak::ColumnOrder::{Asc, Desc};
    let columns = Columns::new(&[Desc, Asc]).unwrap();
    match f {
        Fold::Applied(s) => Some((s.score.get(), columns.values(&s.ties).unwrap())),
        Fold::Unchanged => None,
    }
}

#[test]
fn best_and_min_compare_the_whole_tuple_column_by_column_and_keep_the_earlier_on_a_full_tie() {
    // Columns: the first DESC (more is better), the second ASC (fewer is better).
    let best = tuple_standing(Policy::Best, 10, [5, 3]);
    let f = |score, subs| values(&fold_tuple(Policy::Best, Some(&best), score, subs));
    assert_eq!(
        f(11, [0, 99]),
        Some((11, vec![0, 99])),
        "a better score wins"
    );
    assert_eq!(
        f(9, [99, 0]),
        None,
        "a worse score loses whatever its columns"
    );
    assert_eq!(f(10, [6, 99]), Some((10, vec![6, 99])), "the first column");
    assert_eq!(f(10, [4, 0]), None);
    assert_eq!(f(10, [5, 2]), Some((10, vec![5, 2])), "the second column");
    assert_eq!(f(10, [5, 4]), None);
    assert_eq!(f(10, [5, 3]), None, "a full tie keeps the earlier standing");

    let min = tuple_standing(Policy::Min, 10, [5, 3]);
    let f = |score, subs| values(&fold_tuple(Policy::Min, Some(&min), score, subs));
    assert_eq!(f(9, [0, 99]), Some((9, vec![0, 99])));
    assert_eq!(f(11, [99, 0]), None);
    assert_eq!(f(10, [6, 3]), Some((10, vec![6, 3])));
    assert_eq!(f(10, [5, 2]), Some((10, vec![5, 2])));
    assert_eq!(f(10, [5, 3]), None);

    let latest = tuple_standing(Policy::Latest, 10, [5, 3]);
    let worse = fold_tuple(Policy::Latest, Some(&latest), 1, [0, 9]);
    assert_eq!(values(&worse), Some((1, vec![0, 9])));
}

#[test]
fn sum_adds_every_column_and_a_delta_of_zero_everywhere_changes_nothing() {
    let cur = tuple_standing(Policy::Sum, 10, [5, 3]);
    let f = |score, subs| values(&fold_tuple(Policy::Sum, Some(&cur), score, subs));
    assert_eq!(f(2, [-1, 4]), Some((12, vec![4, 7])));
    assert_eq!(f(0, [0, 1]), Some((10, vec![5, 4])), "a column alone adds");
    assert_eq!(f(0, [0, 0]), None);
}

#[test]
fn a_correction_sets_the_standing_whatever_the_policy_and_the_same_one_changes_nothing() {
    let m = MatchId::parse("fix").unwrap();
    let cur = standing(10, 3);
    let lower = correct(
        Some(&cur),
        (Score::new("s", 4).unwrap(), &Ties::none()),
        &m,
        9,
    );
    match lower {
        Fold::Applied(s) => {
            assert_eq!((s.score.get(), s.version, s.reached_at), (4, 4, 9));
            assert_eq!(s.last_match_id, m);
        }
        Fold::Unchanged => panic!("a correction down applies"),
    }
    let same = correct(Some(&cur), (cur.score, &Ties::none()), &m, 9);
    assert_eq!(same, Fold::Unchanged);
    assert_eq!(
        applied_score(correct(None, (cur.score, &Ties::none()), &m, 9)),
        Some((10, 1))
    );
}
