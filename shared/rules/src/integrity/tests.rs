use serde_json::json;

use super::*;

fn s(v: i64) -> Score {
    Score::new("score", v).unwrap()
}

fn rules(body: serde_json::Value) -> Integrity {
    let d = Decimals::new("decimals", 0).unwrap();
    IntegrityBody::read(body).unwrap().validate(d).unwrap()
}

fn best(score: i64, current: Option<i64>) -> Candidate {
    let next = match current {
        Some(c) if c >= score => None,
        _ => Some(s(score)),
    };
    Candidate {
        policy: Policy::Best,
        score: s(score),
        current: current.map(s),
        next,
        recent: 0,
        top: None,
        duration_ms: None,
    }
}

fn rule_of(r: &Integrity, c: &Candidate) -> Option<Rule> {
    r.judge(c).map(|t| t.rule)
}

#[test]
fn a_result_outside_the_range_is_held_with_its_figures() {
    let r = rules(json!({"min_score": 0, "max_score": 1000}));
    assert_eq!(rule_of(&r, &best(1000, None)), None);
    assert_eq!(rule_of(&r, &best(0, None)), None);
    let t = r.judge(&best(1001, None)).unwrap();
    assert_eq!((t.rule, t.value, t.limit), (Rule::ScoreRange, 1001, 1000));
    assert_eq!(rule_of(&r, &best(-1, None)), Some(Rule::ScoreRange));
}

#[test]
fn the_gain_is_measured_in_the_boards_direction_and_per_result_on_sum() {
    let r = rules(json!({"max_gain": 100}));
    assert_eq!(rule_of(&r, &best(600, Some(500))), None);
    assert_eq!(rule_of(&r, &best(601, Some(500))), Some(Rule::MaxGain));
    // A first result has no gain; a result that changes nothing neither.
    assert_eq!(rule_of(&r, &best(1_000_000, None)), None);
    assert_eq!(rule_of(&r, &best(10, Some(500))), None);
    let min = Candidate {
        policy: Policy::Min,
        next: Some(s(300)),
        current: Some(s(500)),
        ..best(300, None)
    };
    let t = r.judge(&min).unwrap();
    assert_eq!((t.rule, t.value, t.limit), (Rule::MaxGain, 200, 100));
    let sum = Candidate {
        policy: Policy::Sum,
        next: Some(s(10_150)),
        current: Some(s(10_000)),
        ..best(150, None)
    };
    assert_eq!(rule_of(&r, &sum), Some(Rule::MaxGain));
    let sum_small = Candidate {
        score: s(90),
        next: Some(s(10_090)),
        ..sum
    };
    assert_eq!(rule_of(&r, &sum_small), None);
}

#[test]
fn the_rate_holds_the_result_past_the_limit_within_a_minute() {
    let r = rules(json!({"max_results_per_minute": 2}));
    let at = |recent| Candidate {
        recent,
        ..best(5, None)
    };
    assert_eq!(rule_of(&r, &at(1)), None);
    let t = r.judge(&at(2)).unwrap();
    assert_eq!((t.rule, t.value, t.limit), (Rule::Rate, 3, 2));
}

#[test]
fn the_top_rule_takes_a_margin_or_a_factor_and_only_past_the_top() {
    let r = rules(json!({"max_top_factor": 1.5, "max_top_margin": 10000}));
    let with_top = |score, top| Candidate {
        top: Some(s(top)),
        ..best(score, None)
    };
    assert_eq!(rule_of(&r, &with_top(1500, 1000)), None);
    let t = r.judge(&with_top(1501, 1000)).unwrap();
    assert_eq!((t.rule, t.value, t.limit), (Rule::PastTop, 1501, 1500));
    // Below the top, nothing: a result that would not lead is never judged by it.
    assert_eq!(rule_of(&r, &with_top(900, 1000)), None);
    // The margin applies where the factor cannot (a top at or below zero).
    assert_eq!(rule_of(&r, &with_top(9_000, -500)), None);
    assert_eq!(rule_of(&r, &with_top(9_501, -500)), Some(Rule::PastTop));
    // An index that could not say skips the rule.
    assert_eq!(rule_of(&r, &best(1_000_000, None)), None);
    // MIN: lower is better; a time a third of the best is past it by the factor.
    let min = Candidate {
        policy: Policy::Min,
        score: s(60),
        next: Some(s(60)),
        top: Some(s(100)),
        ..best(60, None)
    };
    assert_eq!(rule_of(&r, &min), Some(Rule::PastTop));
    let close = Candidate {
        score: s(70),
        next: Some(s(70)),
        ..min
    };
    assert_eq!(rule_of(&r, &close), None);
}

#[test]
fn a_short_match_is_held_only_when_the_result_says_how_long_it_was() {
    let r = rules(json!({"min_duration_seconds": 30}));
    let lasted = |ms| Candidate {
        duration_ms: ms,
        ..best(5, None)
    };
    assert_eq!(rule_of(&r, &lasted(None)), None);
    assert_eq!(rule_of(&r, &lasted(Some(30_000))), None);
    assert_eq!(rule_of(&r, &lasted(Some(29_999))), Some(Rule::MinDuration));
}

#[test]
fn scores_are_read_at_the_boards_places_and_bad_rules_name_their_field() {
    let d2 = Decimals::new("decimals", 2).unwrap();
    let r = IntegrityBody::read(json!({"max_score": "99.5"}))
        .unwrap()
        .validate(d2)
        .unwrap();
    assert_eq!(r.max_score, Some(s(9950)));
    let field_of = |body| {
        let d = Decimals::new("decimals", 0).unwrap();
        match IntegrityBody::read(body).and_then(|b| b.validate(d)) {
            Err(e) => e.field().map(|f| f.to_string()),
            Ok(_) => None,
        }
    };
    let cases = [
        (
            json!({"min_score": 5, "max_score": 1}),
            "integrity.max_score",
        ),
        (json!({"max_gain": 0}), "integrity.max_gain"),
        (
            json!({"max_results_per_minute": 5}),
            "integrity.max_results_per_minute",
        ),
        (json!({"max_top_factor": 1}), "integrity.max_top_factor"),
        (json!({"max_top_factor": 1.234}), "integrity.max_top_factor"),
        (json!({"max_top_margin": -3}), "integrity.max_top_margin"),
        (
            json!({"min_duration_seconds": 0}),
            "integrity.min_duration_seconds",
        ),
        (json!({"max_score": 1.5}), "integrity.max_score"),
        (json!({"nope": 1}), "integrity.nope"),
        (
            json!({"max_results_per_minute": 2.5}),
            "integrity.max_results_per_minute",
        ),
        (json!("strict"), "integrity"),
    ];
    for (body, field) in cases {
        assert_eq!(field_of(body.clone()).as_deref(), Some(field), "{body}");
    }
    assert!(rules(json!({})).is_empty());
    assert!(!rules(json!({"ban_after_rejections": 2})).is_empty());
}

#[test]
fn a_rule_the_document_refuses_is_a_400_and_one_that_cannot_hold_a_422() {
    let refusal = |body| {
        let d = Decimals::new("decimals", 0).unwrap();
        IntegrityBody::read(body)
            .and_then(|b| b.validate(d))
            .map(|_| ())
            .unwrap_err()
    };
    // Outside the document's minimum and maximum, or of another type: 400.
    for body in [
        json!({"max_top_factor": 1.0}),
        json!({"max_top_factor": 1.009}),
        json!({"max_top_factor": 1001}),
        json!({"max_results_per_minute": 2.5}),
        json!({"min_duration_seconds": 0}),
    ] {
        let e = refusal(body.clone());
        assert!(matches!(e, DomainError::Invalid { .. }), "{body}: {e:?}");
    }
    // Within them, refused by what the rules can hold: 422.
    for body in [
        json!({"max_top_factor": 1.015}),
        json!({"max_gain": 0}),
        json!({"min_score": 5, "max_score": 1}),
    ] {
        let e = refusal(body.clone());
        assert!(
            matches!(e, DomainError::IntegrityRule { .. }),
            "{body}: {e:?}"
        );
    }
    assert!(rules(json!({"max_top_factor": 1.01})).top_factor_pct == Some(101));
    assert!(rules(json!({"max_top_factor": 1000})).top_factor_pct == Some(100_000));
}
