//! The live handler over the in-memory twins: each route answered as the runtime calls it.

use aws_lambda_events::event::dynamodb::EventRecord;
use leaderboard::adapters::dynamodb::StandingItem;
use leaderboard::edge::testing;
use leaderboard_core::memory::{MemoryBroadcasts, context, seed};
use leaderboard_rules::board::{Policy, Standing};
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::live::{Push, View};
use leaderboard_rules::order::{BoardOrder, Direction};
use leaderboard_rules::score::Score;

use super::*;

fn record(seq: &str, lb: &LeaderboardId, player: &str, score: i64, version: u64) -> EventRecord {
    let s = Standing {
        ties: leaderboard_rules::tiebreak::Ties::none(),
        metadata: None,
        score: Score::new("score", score).unwrap(),
        reached_at: 1_000,
        version,
        last_match_id: MatchId::parse("m1").unwrap(),
    };
    let p = PlayerId::parse(player).unwrap();
    let item = StandingItem::new(lb, &p, Direction::Desc, &s, None);
    let mut r = EventRecord::default();
    r.event_name = "MODIFY".into();
    r.change.sequence_number = Some(seq.into());
    r.change.new_image = serde_dynamo::to_item(item).unwrap();
    r
}

fn event(records: Vec<EventRecord>) -> LambdaEvent<Event> {
    let mut e = Event::default();
    e.records = records;
    testing::event(e)
}

#[tokio::test]
async fn pushes_a_watched_view_the_batch_changed_and_retries_when_the_api_refuses() {
    let ctx = context();
    let index = &ctx.index;
    let events = MemoryBroadcasts::default();
    // The board is defined: the live function writes scores as its definition says.
    let lb = seed(&ctx, "h:live", Policy::Best, &[]).await;
    let top = View::top(2).unwrap();
    index
        .watch(BoardOrder::new(&lb, Direction::Desc), &top.id(), i64::MAX)
        .await
        .unwrap();
    let first = vec![record("1", &lb, "a", 10, 1), record("2", &lb, "b", 20, 1)];
    let ok = handle(&ctx, &events, event(first)).await.unwrap();
    assert!(ok.batch_item_failures.is_empty());
    let sent = events.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].0, top.channel(&lb).unwrap());
    let push: Push = serde_json::from_str(&sent[0].1).unwrap();
    let players: Vec<_> = push
        .rows
        .entries
        .iter()
        .map(|r| r.player_id.as_str())
        .collect();
    assert_eq!(players, ["b", "a"]);
    assert_eq!(push.previous, 0);

    events.set_down(true);
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let failed = handle(&ctx, &events, event(vec![record("3", &lb, "c", 30, 1)]))
        .await
        .unwrap();
    assert_eq!(failed.batch_item_failures.len(), 1);
    events.set_down(false);
    let again = handle(&ctx, &events, event(vec![record("3", &lb, "c", 30, 1)]))
        .await
        .unwrap();
    assert!(again.batch_item_failures.is_empty());
    let sent = events.sent();
    assert_eq!(sent.len(), 2, "the retried batch pushes once");
    let second: Push = serde_json::from_str(&sent[1].1).unwrap();
    assert_eq!(second.previous, push.version);
    assert_eq!(second.rows.entries[0].player_id, "c");
}
