//! A player's place among their friends who have a score.

use tracing::instrument;

use super::fallback::{degraded_by, history};
use super::hot_reads::cached;
use super::names;
use super::params::board_for;
use super::reply::{FriendsReply, Provenance, Source, entries};
use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{
    BoardStore, FriendsSource, ProfileStore, RankIndex, RankedReads, StandingStore,
};
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start, places};

/// The player's place among themself and their friends who have a score.
/// The player's own read skips the reply cache.
#[instrument(skip(ctx, friends))]
pub async fn friends_rank<
    S: BoardStore + StandingStore + RankedReads + ProfileStore,
    I: RankIndex,
    F: FriendsSource,
>(
    ctx: &Context<S, I>,
    friends: &F,
    caller: &Caller,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
    mode: RankMode,
) -> Result<FriendsReply, ServiceError> {
    let key = format!("friends|{lb}|{player}|{k}|{}", mode.as_str());
    cached(
        (&ctx.hot.friends, &ctx.last_known),
        (&ctx.boards, lb),
        key,
        caller.is(player),
        || friends_fresh(ctx, friends, lb, player, k, mode),
    )
    .await
}

async fn friends_fresh<
    S: BoardStore + StandingStore + RankedReads + ProfileStore,
    I: RankIndex,
    F: FriendsSource,
>(
    ctx: &Context<S, I>,
    friends: &F,
    lb: &LeaderboardId,
    player: &PlayerId,
    k: u64,
    mode: RankMode,
) -> Result<FriendsReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let mut group = friends.friends_of(player).await?;
    // A friends list may name the player or a friend twice; each counts once.
    group.push(player.clone());
    group.sort_unstable();
    group.dedup();
    let (keys, metadata, meta) = match ctx.index.keys_of(BoardOrder::new(lb, dir), &group).await {
        Ok((keys, _)) if keys.iter().all(Option::is_none) && history(&board) => (
            ctx.store.keys_of(lb, &group).await?,
            None,
            Provenance::now(Source::Dynamodb, false),
        ),
        Ok((keys, metadata)) => (keys, metadata, Provenance::now(Source::Redis, false)),
        Err(e) => (
            ctx.store.keys_of(lb, &group).await?,
            None,
            Provenance::now(Source::Dynamodb, degraded_by(ctx, &board, &e).await),
        ),
    };
    let keys: Vec<RankKey> = keys.into_iter().flatten().collect();
    let mine = keys.iter().find(|key| key.player == player.as_str());
    let score = mine.map(|key| board.scores.show(key.score));
    let subscores = mine.and_then(|key| board.scores.tiebreaks.shown(&key.ties));
    let (friends_rank, window) = place_in_group(dir, mode, player, keys, k);
    let mut neighbors = entries(mode, window.start, window.keys, Some(player), board.scores);
    // Every friend's metadata came with their key: the rows picked need no more call.
    let known = names::Known::picked(&group, metadata, &neighbors);
    let from_index = meta.source == Source::Redis;
    let names_missing = !names::name(ctx, lb, &mut neighbors, known, from_index).await;
    Ok(FriendsReply {
        leaderboard_id: lb.clone(),
        player_id: player.clone(),
        score,
        subscores,
        friends_rank,
        rank_mode: mode,
        friends_total: window.total,
        neighbors,
        meta: Provenance {
            names_missing,
            ..meta
        },
    })
}

/// A slice of a sorted group.
struct GroupWindow {
    total: u64,
    /// Where `keys[0]` stands in the group.
    start: Start,
    keys: Vec<RankKey>,
}

/// Orders the group and picks k rows around `player` (or the top 2k+1 if absent); the
/// player's place and the slice's are under `mode`.
fn place_in_group(
    dir: Direction,
    mode: RankMode,
    player: &PlayerId,
    mut keys: Vec<RankKey>,
    k: u64,
) -> (Option<u64>, GroupWindow) {
    keys.sort_by(|a, b| a.cmp_in(b, dir));
    let total = keys.len() as u64;
    let me = keys.iter().position(|key| key.player == player.as_str());
    let k = k as usize;
    let (lo, hi) = match me {
        Some(i) => (i.saturating_sub(k), (i + k + 1).min(keys.len())),
        None => (0, (2 * k + 1).min(keys.len())),
    };
    let ranks = places(mode, Start::TOP, &keys);
    let window = GroupWindow {
        total,
        start: Start {
            rank: lo as u64 + 1,
            place: ranks.get(lo).copied().unwrap_or(1),
        },
        keys: keys.drain(lo..hi).collect(),
    };
    (me.map(|i| ranks[i]), window)
}

#[cfg(test)]
mod tests {
    use super::*;

    use leaderboard_rules::order::test_key as key;

    #[test]
    fn group_window_centres_on_the_player() {
        let me = PlayerId::parse("me").unwrap();
        let keys = (0..10)
            .map(|i| key(&format!("f{i}"), i))
            .chain([key("me", 4)])
            .collect();
        let (rank, w) = place_in_group(Direction::Desc, RankMode::Unique, &me, keys, 1);
        // Scores 9..0 with "me" tied at 4 after "f4" (same reached-at, "f4" < "me").
        assert_eq!(rank, Some(7));
        assert_eq!(w.total, 11);
        assert_eq!(w.start, Start { rank: 6, place: 6 });
        let players: Vec<_> = w.keys.iter().map(|k| k.player.as_str()).collect();
        assert_eq!(players, ["f4", "me", "f3"]);
    }

    #[test]
    fn a_tie_in_the_group_shares_a_place_on_request() {
        let me = PlayerId::parse("me").unwrap();
        let keys = vec![key("a", 9), key("b", 7), key("me", 7), key("c", 5)];
        let place = |mode| {
            let (rank, w) = place_in_group(Direction::Desc, mode, &me, keys.clone(), 1);
            (rank, w.start.place)
        };
        assert_eq!(place(RankMode::Unique), (Some(3), 2));
        assert_eq!(place(RankMode::Competition), (Some(2), 2));
        assert_eq!(place(RankMode::Dense), (Some(2), 2));
        let (_, w) = place_in_group(Direction::Desc, RankMode::Dense, &me, keys, 0);
        assert_eq!(
            entries(RankMode::Dense, w.start, w.keys, None, Default::default())[0].rank,
            2
        );
    }

    #[test]
    fn group_without_the_player_shows_its_top() {
        let me = PlayerId::parse("me").unwrap();
        let keys = (0..10).map(|i| key(&format!("f{i}"), i)).collect();
        let (rank, w) = place_in_group(Direction::Desc, RankMode::Dense, &me, keys, 2);
        assert_eq!(rank, None);
        assert_eq!(w.start, Start::TOP);
        assert_eq!(w.keys.len(), 5);
        assert_eq!(w.keys[0].player, "f9");
    }
}
