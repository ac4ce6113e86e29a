use super::*;
use crate::service::write::reply::HeldNote;
use leaderboard_rules::decimal::ScoreFormat;
use leaderboard_rules::ids::{MatchId, PlayerId};

#[expect(
    clippy::fn_params_excessive_bools,
    reason = "a test's table of outcomes, one flag per column"
)]
fn board(replayed: bool, held: bool, update_applied: bool) -> BoardOutcome {
    BoardOutcome {
        scope: "GLOBAL".into(),
        period: Period::AllTime,
        leaderboard_id: None,
        outcome: Outcome::Accepted {
            score: ScoreFormat::default().show_scaled(1),
            subscores: None,
            previous_score: None,
            update_applied,
            rank: None,
            previous_rank: None,
            updated_at: String::new(),
            replayed,
            held: held.then_some(HeldNote {
                status: "HELD",
                rule: "max_gain",
            }),
        },
    }
}

fn did(results: Vec<BoardOutcome>) -> (bool, bool, bool) {
    let reply = MatchReply {
        player_id: PlayerId::parse("p").unwrap(),
        match_id: MatchId::parse("m").unwrap(),
        event_ts: String::new(),
        results,
        tournaments: Vec::new(),
    };
    reply.now()
}

/// What a match counts in the metrics: once, whatever the number of its boards.
#[test]
fn a_match_counts_what_it_did_now_once_and_a_replay_nothing() {
    // (applied, held, improved)
    let both = did(vec![board(false, false, true), board(false, false, false)]);
    assert_eq!(both, (true, false, true));
    assert_eq!(did(vec![board(false, false, false)]), (true, false, false));
    assert_eq!(
        did(vec![board(false, true, false), board(false, true, false)]),
        (false, true, false)
    );
    // Held on one board (its standing made the gain too big), applied on the other.
    assert_eq!(
        did(vec![board(false, true, false), board(false, false, true)]),
        (true, true, true)
    );
    assert_eq!(
        did(vec![board(true, false, true), board(true, true, false)]),
        (false, false, false)
    );
    assert_eq!(did(Vec::new()), (false, false, false));
}
