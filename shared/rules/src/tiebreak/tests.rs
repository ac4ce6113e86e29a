use super::*;
use serde_json::json;

fn cols(orders: &[ColumnOrder]) -> Columns {
    Columns::new(orders).unwrap()
}

fn ties(c: &Columns, values: &[i64]) -> Ties {
    let scores: Vec<Score> = values
        .iter()
        .map(|v| Score::new("s", *v).unwrap())
        .collect();
    c.encode(&scores).unwrap()
}

/// The documented order of two tuples on `c`, column by column.
fn reference(c: &Columns, a: &[i64], b: &[i64]) -> std::cmp::Ordering {
    for ((order, x), y) in c.orders().iter().zip(a).zip(b) {
        let by = match order {
            ColumnOrder::Asc => x.cmp(y),
            ColumnOrder::Desc => y.cmp(x),
        };
        if by.is_ne() {
            return by;
        }
    }
    std::cmp::Ordering::Equal
}

#[test]
fn the_byte_order_of_ties_is_the_columns_order_at_every_column_and_the_range_edges() {
    use ColumnOrder::{Asc, Desc};
    let edge = [
        -MAX_ABS_SCORE,
        -MAX_ABS_SCORE + 1,
        -1,
        0,
        1,
        MAX_ABS_SCORE - 1,
        MAX_ABS_SCORE,
    ];
    for orders in [
        vec![Asc],
        vec![Desc],
        vec![Asc, Desc],
        vec![Desc, Asc, Desc],
        vec![Asc, Asc, Asc],
    ] {
        let c = cols(&orders);
        let mut tuples: Vec<Vec<i64>> = vec![vec![]];
        for _ in 0..c.len() {
            tuples = tuples
                .into_iter()
                .flat_map(|t| {
                    edge.iter().map(move |v| {
                        let mut t = t.clone();
                        t.push(*v);
                        t
                    })
                })
                .collect();
        }
        for a in &tuples {
            let ta = ties(&c, a);
            assert_eq!(ta.as_str().len(), c.len() * WIDTH);
            assert_eq!(c.values(&ta).as_deref(), Some(a.as_slice()));
            assert_eq!(Ties::stored(ta.as_str()), Some(ta.clone()));
            for b in tuples.iter().step_by(7) {
                let tb = ties(&c, b);
                assert_eq!(
                    ta.as_str().as_bytes().cmp(tb.as_str().as_bytes()),
                    reference(&c, a, b),
                    "{orders:?} {a:?} {b:?}"
                );
            }
        }
    }
}

#[test]
fn a_board_takes_exactly_one_value_per_column() {
    let c = cols(&[ColumnOrder::Asc, ColumnOrder::Desc]);
    let one = [Score::new("s", 1).unwrap()];
    assert!(matches!(
        c.encode(&one),
        Err(DomainError::SubscoresMismatch {
            expected: 2,
            got: 1
        })
    ));
    assert!(matches!(
        Columns::NONE.encode(&one),
        Err(DomainError::SubscoresMismatch {
            expected: 0,
            got: 1
        })
    ));
    assert_eq!(Columns::NONE.encode(&[]).unwrap(), Ties::none());
    assert_eq!(Columns::NONE.shown(&Ties::none()), None);
    assert_eq!(c.shown(&ties(&c, &[3, -4])), Some(vec![3, -4]));
}

#[test]
fn sums_add_each_column_and_refuse_leaving_the_range() {
    let c = cols(&[ColumnOrder::Desc, ColumnOrder::Asc]);
    let total = c.add(&ties(&c, &[5, -2]), &ties(&c, &[-7, 10])).unwrap();
    assert_eq!(c.values(&total), Some(vec![-2, 8]));
    assert!(matches!(
        c.add(&ties(&c, &[MAX_ABS_SCORE, 0]), &ties(&c, &[1, 0])),
        Err(DomainError::ScoreOutOfRange { .. })
    ));
}

#[test]
fn columns_are_asked_as_an_array_of_orders_and_anything_else_names_the_field() {
    assert_eq!(Columns::asked(None).unwrap(), Columns::NONE);
    assert_eq!(Columns::asked(Some(&json!(null))).unwrap(), Columns::NONE);
    let c = Columns::asked(Some(&json!(["DESC", "ASC"]))).unwrap();
    assert_eq!(c.orders(), [ColumnOrder::Desc, ColumnOrder::Asc]);
    assert_eq!(serde_json::to_value(c).unwrap(), json!(["DESC", "ASC"]));
    assert_eq!(
        serde_json::from_value::<Columns>(json!(["DESC", "ASC"])).unwrap(),
        c
    );
    for bad in [
        json!("ASC"),
        json!(["asc"]),
        json!([1]),
        json!(["ASC", "ASC", "ASC", "ASC"]),
    ] {
        let e = Columns::asked(Some(&bad)).unwrap_err();
        assert!(e.to_string().starts_with("tiebreaks:"), "{bad}: {e}");
    }
    assert!(serde_json::from_value::<Columns>(json!(["ASC", "ASC", "ASC", "ASC"])).is_err());
}

#[test]
fn subscores_are_read_as_integers_and_anything_else_names_the_field() {
    let got = read_subscores(Some(&json!([1, -2, MAX_ABS_SCORE]))).unwrap();
    assert_eq!(
        got.iter().map(|s| s.get()).collect::<Vec<_>>(),
        [1, -2, MAX_ABS_SCORE]
    );
    assert!(read_subscores(None).unwrap().is_empty());
    for bad in [
        json!(1),
        json!([1.5]),
        json!(["1"]),
        json!([1, 2, 3, 4]),
        json!([null]),
    ] {
        let e = read_subscores(Some(&bad)).unwrap_err();
        assert!(e.to_string().starts_with("subscores"), "{bad}: {e}");
    }
    assert!(matches!(
        read_subscores(Some(&json!([9_007_199_254_740_992_i64]))),
        Err(DomainError::ScoreOutOfRange { .. })
    ));
}

#[test]
fn stored_ties_are_whole_columns_of_digits_in_range() {
    assert_eq!(Ties::stored(""), Some(Ties::none()));
    assert!(Ties::stored("123").is_none());
    assert!(Ties::stored("0000000000000000a").is_none());
    assert!(
        Ties::stored("00000000000000000").is_none(),
        "below the range"
    );
    assert!(
        Ties::stored("99999999999999999").is_none(),
        "above the range"
    );
    assert!(Ties::stored(&"00000000000000001".repeat(4)).is_none());
}
