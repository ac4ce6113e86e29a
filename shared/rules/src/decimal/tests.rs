use super::*;

fn d(n: u8) -> Decimals {
    Decimals::new("decimals", n).unwrap()
}

fn scaled(text: &str, places: u8) -> Result<i64, DomainError> {
    parse("new_score", text, d(places)).map(Score::get)
}

#[test]
fn decimal_text_is_read_exactly_as_a_scaled_integer() {
    assert_eq!(scaled("83.417", 3).unwrap(), 83_417);
    assert_eq!(scaled("83.4", 3).unwrap(), 83_400);
    assert_eq!(scaled("83", 3).unwrap(), 83_000);
    assert_eq!(scaled("-0.05", 2).unwrap(), -5);
    assert_eq!(scaled("0", 6).unwrap(), 0);
    assert_eq!(scaled("-0.0", 1).unwrap(), 0);
    // Trailing zeros are not places; exponents are read exactly.
    assert_eq!(scaled("1.50", 1).unwrap(), 15);
    assert_eq!(scaled("8.3417e1", 3).unwrap(), 83_417);
    assert_eq!(scaled("83417E-3", 3).unwrap(), 83_417);
    assert_eq!(scaled("1e+2", 0).unwrap(), 100);
    assert_eq!(scaled("12", 0).unwrap(), 12);
}

#[test]
fn the_exact_range_holds_on_the_scaled_value_at_every_scale() {
    for places in 0..=MAX_DECIMALS {
        let top = format(MAX_ABS_SCORE, d(places));
        assert_eq!(scaled(&top, places).unwrap(), MAX_ABS_SCORE, "{top}");
        assert_eq!(scaled(&format!("-{top}"), places).unwrap(), -MAX_ABS_SCORE);
        // One unit of the last place more is out of range, not rounded.
        let over = format!("{}2", &top[..top.len() - 1]);
        assert!(
            matches!(
                scaled(&over, places),
                Err(DomainError::ScoreOutOfRange { .. })
            ),
            "{over} at {places}"
        );
    }
    assert!(matches!(
        scaled("1e400", 0),
        Err(DomainError::ScoreOutOfRange { .. })
    ));
    assert!(matches!(
        scaled("123456789012345678901234567890", 0),
        Err(DomainError::ScoreOutOfRange { .. })
    ));
}

#[test]
fn more_places_than_the_board_keeps_are_refused_never_rounded() {
    for (text, places) in [("83.4171", 3), ("0.5", 0), ("1e-7", 6), ("1.05", 1)] {
        assert!(
            matches!(
                scaled(text, places),
                Err(DomainError::TooManyDecimals { allowed, .. }) if allowed == places
            ),
            "{text} at {places}"
        );
    }
    assert!(matches!(
        scaled("1e-99999", 2),
        Err(DomainError::TooManyDecimals { .. })
    ));
    assert_eq!(scaled("0e-99999", 2).unwrap(), 0);
}

#[test]
fn malformed_text_is_refused_as_invalid() {
    for text in [
        "", "-", ".5", "5.", "01", "1.2.3", "1e", "1e+", "0x10", " 1", "1 ", "+1", "NaN",
        "Infinity", "1_000", "١",
    ] {
        assert!(
            matches!(scaled(text, 3), Err(DomainError::Invalid { .. })),
            "{text:?}"
        );
    }
    assert!(Decimals::new("decimals", 7).is_err());
}

#[test]
fn a_scaled_score_formats_with_exactly_the_boards_places_and_reads_back() {
    let cases = [
        (83_417, 3, "83.417"),
        (-5, 2, "-0.05"),
        (0, 2, "0.00"),
        (1_200, 0, "1200"),
        (-1, 6, "-0.000001"),
    ];
    for (value, places, text) in cases {
        assert_eq!(format(value, d(places)), text);
        assert_eq!(scaled(text, places).unwrap(), value);
    }
}

fn raw(json: &str) -> Box<serde_json::value::RawValue> {
    serde_json::from_str(json).unwrap()
}

#[test]
fn an_amount_is_read_as_written_and_scaled_only_at_the_boards_places() {
    let three = d(3);
    for json in ["83.417", "\"83.417\"", "\"83.4170\"", "8.3417e1"] {
        let amount = Amount::read("new_score", &raw(json)).unwrap();
        assert_eq!(amount.scaled(three).unwrap().get(), 83_417, "{json}");
    }
    // Places and range are the board's to judge: read now, refused when scaled.
    let fine = Amount::read("new_score", &raw("83.4171")).unwrap();
    assert!(matches!(
        fine.scaled(three),
        Err(DomainError::TooManyDecimals { .. })
    ));
    assert!(fine.scaled(d(4)).is_ok());
    // Malformed text and what is not a number are refused when read, naming the field.
    for json in ["\"83,4\"", "true", "null", "[1]", "{}", "\"\"", "\" 1\""] {
        match Amount::read("score", &raw(json)) {
            Err(DomainError::Invalid { field, .. }) => assert_eq!(field, "score"),
            other => panic!("{json}: {other:?}"),
        }
    }
    // A parsed value (the stream mappings): a string exactly, a number by its text.
    let v: serde_json::Value = serde_json::from_str(r#"[83.417, "0.10"]"#).unwrap();
    let amounts: Vec<i64> = (0..2)
        .map(|i| {
            Amount::from_value("score", &v[i])
                .unwrap()
                .scaled(three)
                .unwrap()
                .get()
        })
        .collect();
    assert_eq!(amounts, [83_417, 100]);
}

#[test]
fn a_shown_score_is_an_integer_a_number_with_the_places_or_a_string() {
    let show = |decimals, style| ScoreFormat {
        tiebreaks: crate::tiebreak::Columns::NONE,
        decimals: d(decimals),
        style,
    };
    let cases = [
        (show(0, Style::Number), 1_200, "1200"),
        (show(0, Style::String), -7, "-7"),
        (show(3, Style::Number), 83_410, "83.410"),
        (show(3, Style::String), -5, "\"-0.005\""),
        (show(6, Style::Number), MAX_ABS_SCORE, "9007199254.740991"),
    ];
    for (format, value, json) in cases {
        let shown = serde_json::to_string(&format.show_scaled(value)).unwrap();
        assert_eq!(shown, json);
    }
}
