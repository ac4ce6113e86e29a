//! Reads with names against the same reads without (the design's 1.3x target): every
//! player's card in the index, and the rank and top reads through the service with and
//! without them.

use leaderboard_core::store::CardCopies;
use std::time::Duration;

use leaderboard::edge::http;
use leaderboard::edge::reply;
use leaderboard::wiring::AppContext;
use leaderboard_core::service::reads;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankMode;

use crate::board::{Player, player_id};

/// Every player's card copied into the index, as it stands once the players were read
/// (steady state: a read with names finds every card in Redis).
pub(crate) async fn seed_cards(ctx: &AppContext, players: &[Player]) -> anyhow::Result<()> {
    use leaderboard_core::store::VersionedCard;
    use leaderboard_rules::profile::Card;
    const COUNTRIES: [&str; 8] = ["SE", "US", "BR", "JP", "DE", "KR", "FR", "IN"];
    for chunk in players.chunks(5_000) {
        let cards: Vec<(PlayerId, VersionedCard)> = chunk
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let card = Card {
                    display_name: Some(format!("Player {}", p.id)),
                    avatar: Some(format!("avatars/{}.png", i % 64)),
                    country: Some(COUNTRIES[i % COUNTRIES.len()].to_owned()),
                };
                (player_id(p), VersionedCard { version: 1, card })
            })
            .collect();
        ctx.index.put_cards(&cards).await?;
    }
    Ok(())
}

/// A rank + 10 neighbours read, checked to show names or not as its context says.
pub(crate) async fn named_rank(
    ctx: &AppContext,
    lb: &LeaderboardId,
    p: PlayerId,
    named: bool,
) -> anyhow::Result<http::Response> {
    let reply = reads::rank(ctx, &Caller::default(), lb, &p, 5, RankMode::Unique).await?;
    let shown = reply.neighbors[0].card.display_name.is_some();
    anyhow::ensure!(shown == named, "names shown: {shown}");
    Ok(reply::json(200, &reply))
}

/// A top-100 read, checked to show names or not as its context says.
pub(crate) async fn named_top(
    ctx: &AppContext,
    lb: &LeaderboardId,
    named: bool,
) -> anyhow::Result<http::Response> {
    let reply = reads::top(ctx, lb, 100, RankMode::Unique).await?;
    anyhow::ensure!(reply.entries.len() == 100, "short top");
    let shown = reply.entries[99].card.display_name.is_some();
    anyhow::ensure!(shown == named, "names shown: {shown}");
    Ok(reply::json(200, &reply))
}

/// A context over the same table and Redis that puts no names on rows.
pub(crate) fn without_names(ctx: &AppContext, url: &str) -> anyhow::Result<AppContext> {
    let store = leaderboard::adapters::dynamodb::DynamoScoreStore::new(
        ctx.store.client().clone(),
        ctx.store.table(),
    );
    let index =
        leaderboard::adapters::redis::RedisRankIndex::new(url, "bench:", Duration::from_secs(5))?
            .without_names();
    let settings = leaderboard_core::service::Settings {
        names_on_rows: false,
        ..ctx.settings.clone()
    };
    Ok(leaderboard_core::service::Context::new(
        store, index, settings,
    ))
}
