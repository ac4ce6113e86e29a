use super::*;
use serde_json::json;

fn league(v: serde_json::Value) -> League {
    serde_json::from_value::<League>(v)
        .unwrap()
        .validated()
        .unwrap()
}

fn three() -> League {
    league(json!({"tiers": [
        {"id": "bronze", "promote": {"count": 3},
         "rewards": [{"from_rank": 1, "to_rank": 1, "reward": "chest-b"}]},
        {"id": "silver", "promote": {"percent": 20}, "demote": {"count": 2},
         "rewards": [{"from_rank": 1, "to_rank": 3, "reward": "chest-s"}]},
        {"id": "gold", "demote": {"percent": 10}}],
        "absent": "DEMOTE"}))
}

fn players(prefix: &str, n: usize) -> Vec<PlayerId> {
    (0..n)
        .map(|i| PlayerId::parse(&format!("{prefix}{i}")).unwrap())
        .collect()
}

/// Ranked members, every one named.
fn ranked(prefix: &str, n: usize) -> Vec<Option<PlayerId>> {
    players(prefix, n).into_iter().map(Some).collect()
}

/// (tier after, reward) per member, in order.
fn after(out: &[Settled]) -> Vec<(usize, Option<&str>)> {
    out.iter()
        .map(|s| (s.tier_after, s.reward.as_deref()))
        .collect()
}

#[test]
fn zones_move_the_top_up_and_the_bottom_down_and_rewards_follow_the_rank() {
    let l = three();
    // Silver, 10 members, 8 with a result: top 20% = 2 up; bottom 2 (the two without
    // a result) down; ranks 1-3 earn the chest.
    let out = l.settle(1, &ranked("r", 8), &players("a", 2));
    let want: Vec<(usize, Option<&str>)> = [
        (2, Some("chest-s")),
        (2, Some("chest-s")),
        (1, Some("chest-s")),
    ]
    .into_iter()
    .chain(std::iter::repeat_n((1, None), 5))
    .chain(std::iter::repeat_n((0, None), 2))
    .collect();
    assert_eq!(after(&out), want);
    assert_eq!(out[7].rank, Some(8));
    assert_eq!(out[8].rank, None);
    // None at the ends: bronze demotes no one, gold promotes no one.
    let bronze = l.settle(0, &ranked("r", 5), &[]);
    assert_eq!(
        after(&bronze)[..4],
        [(1, Some("chest-b")), (1, None), (1, None), (0, None)]
    );
    let gold = l.settle(2, &ranked("r", 30), &[]);
    assert!(gold[..27].iter().all(|s| s.tier_after == 2));
    assert!(gold[27..].iter().all(|s| s.tier_after == 1));
}

#[test]
fn small_cohorts_never_promote_and_demote_the_same_member() {
    let l = league(json!({"tiers": [{"id": "a", "promote": {"count": 3}},
        {"id": "b", "promote": {"count": 3}, "demote": {"count": 3}}, {"id": "c"}]}));
    for n in 0..8 {
        let out = l.settle(1, &ranked("r", n), &[]);
        let up = out.iter().filter(|s| s.tier_after == 2).count();
        let down = out.iter().filter(|s| s.tier_after == 0).count();
        assert_eq!(up, n.min(3), "{n} members");
        assert_eq!(down, n.saturating_sub(3).min(3), "{n} members");
    }
    // Members without a result never promote, even inside the top zone's size.
    let out = l.settle(1, &ranked("r", 1), &players("a", 3));
    assert_eq!(out.iter().filter(|s| s.tier_after == 2).count(), 1);
    assert!(
        out[1..]
            .iter()
            .all(|s| s.tier_after <= 1 && s.reward.is_none())
    );
}

#[test]
fn a_ranked_place_erased_since_the_seal_keeps_its_rank_unnamed() {
    let l = three();
    let mut order = ranked("r", 8);
    order[1] = None;
    let out = l.settle(1, &order, &[]);
    let ranks: Vec<(Option<&str>, Option<u64>)> = (out.iter())
        .map(|s| (s.player_id.as_ref().map(PlayerId::as_str), s.rank))
        .collect();
    assert_eq!(ranks[1], (None, Some(2)));
    assert_eq!(ranks[2], (Some("r2"), Some(3)));
    // The same zones and rewards as with the place named.
    assert_eq!(after(&out), after(&l.settle(1, &ranked("r", 8), &[])));
}

#[test]
fn settling_is_a_pure_function_of_the_order_and_the_definition() {
    let l = three();
    let (ranked, absent) = (ranked("r", 37), players("a", 4));
    assert_eq!(l.settle(1, &ranked, &absent), l.settle(1, &ranked, &absent));
    // A changed definition decides differently on the same sealed order.
    let mut wider = l.clone();
    wider.tiers[1].promote = Some(Zone {
        count: Some(10),
        percent: None,
    });
    let up = |out: Vec<Settled>| out.iter().filter(|s| s.tier_after == 2).count();
    assert_eq!(
        (
            up(l.settle(1, &ranked, &absent)),
            up(wider.settle(1, &ranked, &absent))
        ),
        (8, 10)
    );
}

#[test]
fn impossible_leagues_are_refused_naming_the_field() {
    let field =
        |v: serde_json::Value| match serde_json::from_value::<League>(v).unwrap().validated() {
            Err(DomainError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
    assert_eq!(field(json!({"tiers": []})), "league.tiers");
    let dup = json!({"tiers": [{"id": "a"}, {"id": "a"}]});
    assert_eq!(field(dup), "league.tiers[1].id");
    let top = json!({"tiers": [{"id": "a"}, {"id": "b", "promote": {"count": 1}}]});
    assert_eq!(field(top), "league.tiers[1].promote");
    let low = json!({"tiers": [{"id": "a", "demote": {"count": 1}}, {"id": "b"}]});
    assert_eq!(field(low), "league.tiers[0].demote");
    let both = json!({"tiers": [{"id": "a", "promote": {"count": 1, "percent": 5}}, {"id": "b"}]});
    assert_eq!(field(both), "league.tiers[0].promote");
    let pct = json!({"tiers": [{"id": "a", "promote": {"percent": 101}}, {"id": "b"}]});
    assert_eq!(field(pct), "league.tiers[0].promote");
    let overlap = json!({"tiers": [{"id": "a", "rewards": [
        {"from_rank": 1, "to_rank": 3, "reward": "x"},
        {"from_rank": 3, "to_rank": 5, "reward": "y"}]}]});
    assert_eq!(field(overlap), "league.tiers[0].rewards");
    let start = json!({"tiers": [{"id": "a"}], "start_tier": "z"});
    assert_eq!(field(start), "league.start_tier");
    assert_eq!(three().start(), 0);
    let named = league(json!({"tiers": [{"id": "a"}, {"id": "b"}], "start_tier": "b"}));
    assert_eq!(named.start(), 1);
}
