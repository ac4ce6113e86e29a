use super::*;
use serde_json::json;

fn table(v: serde_json::Value) -> Result<RewardTable, DomainError> {
    serde_json::from_value::<RewardTable>(v)
        .unwrap()
        .validated()
}

/// (index, place, reward, quantity) of every place that earns one.
fn decided(t: &RewardTable, tied: &[bool], total: u64) -> Vec<(usize, u64, String, u32)> {
    (t.decide(tied, total).into_iter())
        .map(|e| (e.index, e.place, e.range.reward.clone(), e.range.quantity))
        .collect()
}

/// (index, place, reward) of every place that earns one.
fn short(t: &RewardTable, tied: &[bool], total: u64) -> Vec<(usize, u64, String)> {
    (decided(t, tied, total).into_iter())
        .map(|(i, p, r, _)| (i, p, r))
        .collect()
}

fn want(rows: &[(usize, u64, &str)]) -> Vec<(usize, u64, String)> {
    rows.iter().map(|&(i, p, r)| (i, p, r.to_owned())).collect()
}

fn podium(mode: &str) -> RewardTable {
    table(json!({"rank_mode": mode, "ranges": [
        {"from_rank": 1, "to_rank": 1, "reward": "gold", "quantity": 3},
        {"from_rank": 2, "to_rank": 3, "reward": "silver"},
        {"top_percent": 50, "reward": "chest"}]}))
    .unwrap()
}

// Scores 90, 80, 80, 80, 70, 60, 50, 40: places 2 to 4 tie on 80.
const TIED: [bool; 8] = [false, false, true, true, false, false, false, false];

#[test]
fn unique_places_split_a_tie_at_a_range_edge_by_the_board_order() {
    let out = decided(&podium("unique"), &TIED, 8);
    assert_eq!(out[0], (0, 1, "gold".to_owned(), 3));
    assert_eq!(
        short(&podium("unique"), &TIED, 8),
        want(&[
            (0, 1, "gold"),
            (1, 2, "silver"),
            (2, 3, "silver"),
            (3, 4, "chest")
        ])
    );
}

#[test]
fn competition_places_give_every_tied_player_the_range_of_their_shared_place() {
    // The three on 80 share place 2: all silver. Place 5 is past the top half's 4.
    assert_eq!(
        short(&podium("competition"), &TIED, 8),
        want(&[
            (0, 1, "gold"),
            (1, 2, "silver"),
            (2, 2, "silver"),
            (3, 2, "silver")
        ])
    );
}

#[test]
fn dense_places_count_scores_so_more_players_reach_a_range() {
    assert_eq!(
        short(&podium("dense"), &TIED, 8),
        want(&[
            (0, 1, "gold"),
            (1, 2, "silver"),
            (2, 2, "silver"),
            (3, 2, "silver"),
            (4, 3, "silver"),
            (5, 4, "chest"),
        ])
    );
}

#[test]
fn a_percent_rounds_up_so_a_small_board_still_pays_its_top() {
    let t = table(json!({"ranges": [{"top_percent": 10, "reward": "chest"}]})).unwrap();
    assert_eq!(decided(&t, &[false; 5], 5).len(), 1);
    assert_eq!(decided(&t, &[false; 20], 20).len(), 2);
    assert_eq!(decided(&t, &[false; 21], 21).len(), 3);
    assert!(decided(&t, &[], 0).is_empty());
}

#[test]
fn a_table_defaults_to_unique_places_one_of_each_reward_and_thirty_days() {
    let t = table(json!({"ranges": [{"from_rank": 1, "to_rank": 10, "reward": "x"}]})).unwrap();
    assert_eq!(t.rank_mode, RankMode::Unique);
    assert_eq!(t.ranges[0].quantity, 1);
    assert_eq!(t.expiry_ms(), 30 * 86_400_000);
}

#[test]
fn bad_tables_are_refused_naming_the_field() {
    let field = |v| match table(v).unwrap_err() {
        DomainError::Invalid { field, .. } => field.to_string(),
        other => panic!("{other:?}"),
    };
    let one = |r: serde_json::Value| json!({"ranges": [r]});
    assert_eq!(field(json!({"ranges": []})), "rewards.ranges");
    for bad in [
        json!({"from_rank": 0, "to_rank": 1, "reward": "x"}),
        json!({"from_rank": 3, "to_rank": 2, "reward": "x"}),
        json!({"from_rank": 1, "to_rank": 1001, "reward": "x"}),
        json!({"from_rank": 1, "reward": "x"}),
        json!({"top_percent": 0, "reward": "x"}),
        json!({"top_percent": 101, "reward": "x"}),
        json!({"from_rank": 1, "to_rank": 2, "top_percent": 5, "reward": "x"}),
        json!({"from_rank": 1, "to_rank": 2, "reward": "x", "quantity": 0}),
        json!({"from_rank": 1, "to_rank": 2, "reward": "no spaces"}),
    ] {
        assert_eq!(field(one(bad.clone())), "rewards.ranges", "{bad}");
    }
    let overlap = json!({"ranges": [
        {"from_rank": 1, "to_rank": 3, "reward": "a"},
        {"from_rank": 3, "to_rank": 5, "reward": "b"}]});
    assert_eq!(field(overlap), "rewards.ranges");
    let nested = json!({"ranges": [
        {"top_percent": 1, "reward": "a"}, {"top_percent": 10, "reward": "b"}]});
    assert!(table(nested).is_ok());
    let days = json!({"ranges": [{"top_percent": 1, "reward": "a"}], "expires_after_days": 0});
    assert_eq!(field(days), "rewards.expires_after_days");
    let unknown = json!({"ranges": [{"top_percent": 1, "reward": "a", "prize": 1}]});
    assert!(serde_json::from_value::<RewardTable>(unknown).is_err());
}

#[test]
fn a_reward_id_is_a_board_id_and_anything_else_is_refused_naming_id() {
    assert!(parse_reward_id("g:m:GLOBAL:DAILY:2026-12-01").is_ok());
    assert!(parse_reward_id(&format!("{}.reset-2", "b".repeat(128))).is_ok());
    for bad in ["", "a/b", "\u{2603}", &"x".repeat(161)] {
        let field = match parse_reward_id(bad).unwrap_err() {
            DomainError::Invalid { field, .. } => field.to_string(),
            other => panic!("{other:?}"),
        };
        assert_eq!(field, "id", "{bad}");
    }
}
