//! The projector handler over the in-memory twins: each route answered as the runtime calls it.

use aws_lambda_events::event::dynamodb::EventRecord;
use leaderboard::adapters::dynamodb::StandingItem;
use leaderboard_core::memory::MemoryIndex;
use leaderboard_core::store::IndexWrites;
use leaderboard_rules::board::Standing;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::Direction;
use leaderboard_rules::score::Score;

use super::*;

fn record(seq: &str, image: serde_dynamo::Item) -> EventRecord {
    let mut r = EventRecord::default();
    r.event_name = "MODIFY".into();
    r.change.sequence_number = Some(seq.into());
    r.change.new_image = image;
    r
}

fn standing(lb: &LeaderboardId, player: &str, score: i64) -> serde_dynamo::Item {
    let s = Standing {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        metadata: None,
        score: Score::new("score", score).unwrap(),
        reached_at: 1_000,
        version: 1,
        last_match_id: MatchId::parse("m1").unwrap(),
    };
    let p = PlayerId::parse(player).unwrap();
    serde_dynamo::to_item(StandingItem::new(lb, &p, Direction::Desc, &s, None)).unwrap()
}

fn event(lb: &LeaderboardId) -> Event {
    let receipt = serde_json::json!({"pk": "R#x", "sk": "M#m1", "kind": "receipt"});
    let poison = serde_json::json!({"kind": "standing", "score": "not a number"});
    let mut e = Event::default();
    e.records = vec![
        record("1", standing(lb, "alice", 10)),
        record("2", serde_dynamo::to_item(receipt).unwrap()),
        record("3", serde_dynamo::to_item(poison).unwrap()),
        record("4", standing(lb, "bob", 20)),
    ];
    e
}

#[tokio::test]
async fn applies_the_standings_skips_the_rest_and_names_failures_for_retry() {
    let index = MemoryIndex::default();
    let lb = LeaderboardId::parse("h:projector").unwrap();
    index.init_board(&lb, None, true).await.unwrap();
    let repairs = Reporter::default();
    let events = leaderboard_core::memory::MemoryEvents::default();
    let call = || {
        handle(
            &index,
            &repairs,
            &events,
            leaderboard::edge::testing::event(event(&lb)),
        )
    };
    let ok = call().await.unwrap();
    assert!(
        ok.batch_item_failures.is_empty(),
        "poison never blocks the shard"
    );
    let players: Vec<_> = index
        .snapshot(&lb, Direction::Desc)
        .into_iter()
        .map(|(_, k)| k.player)
        .collect();
    assert_eq!(players, ["bob", "alice"]);
    index.set_down(true);
    let failed = call().await.unwrap();
    let named: Vec<_> = failed
        .batch_item_failures
        .iter()
        .map(|f| f.item_identifier.clone())
        .collect();
    assert_eq!(named, [Some("1".to_owned()), Some("4".to_owned())]);
}
