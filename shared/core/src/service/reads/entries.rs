//! The rows of a list of players, `GET /leaderboards/{lb}/entries?players=a,b,c`: each
//! one on the board with their rank, score and reach time, in rank order; the ids that
//! have no score listed apart. One Redis round trip; from DynamoDB (degraded, or a closed
//! window) one read of the board's first [`COUNT_CAP`] entries places everyone inside
//! them exactly, and the board's rank sketch estimates the rest.

use tracing::instrument;

use super::estimate::{COUNT_CAP, estimate};
use super::fallback::{history, rank_order_after};
use super::hot_reads::cached;
use super::names::{self, Known};
use super::params::board_for;
use super::reply::{EntriesReply, Entry, Provenance, Source};
use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{PlayerRow, RankIndex, RankedReads, ReadStore, SketchStore};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey, RankMode, Start, places};

/// Most players one `entries` read names.
pub const MAX_PLAYERS: usize = 100;

/// Parses `players`: 1 to [`MAX_PLAYERS`] comma-separated ids; a repeated id counts once.
pub fn parse_players(raw: Option<&str>) -> Result<Vec<PlayerId>, DomainError> {
    let raw = raw.ok_or_else(|| DomainError::invalid("players", "is required"))?;
    let mut players: Vec<PlayerId> = Vec::new();
    for id in raw.split(',') {
        let id = PlayerId::parse(id).map_err(|_| {
            DomainError::invalid(
                "players",
                "must be comma-separated player ids (A-Z a-z 0-9 _ . : -, 1-128 characters)",
            )
        })?;
        if !players.contains(&id) {
            players.push(id);
        }
    }
    if players.len() > MAX_PLAYERS {
        return Err(DomainError::invalid(
            "players",
            format!("names at most {MAX_PLAYERS} players"),
        ));
    }
    Ok(players)
}

/// The rows of `players` on `lb`, under `mode`.
#[instrument(skip(ctx, players), fields(count = players.len()))]
pub async fn entries<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    players: &[PlayerId],
    mode: RankMode,
) -> Result<EntriesReply, ServiceError> {
    let names: Vec<&str> = players.iter().map(PlayerId::as_str).collect();
    let key = format!("entries|{lb}|{}|{}", names.join(","), mode.as_str());
    cached(
        (&ctx.hot.entries, &ctx.last_known),
        (&ctx.boards, lb),
        key,
        false,
        || entries_fresh(ctx, lb, players, mode),
    )
    .await
}

async fn entries_fresh<S: ReadStore, I: RankIndex>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    players: &[PlayerId],
    mode: RankMode,
) -> Result<EntriesReply, ServiceError> {
    let board = board_for(ctx, lb, mode).await?;
    let dir = board.policy.direction();
    let mut known = Known::default();
    let (mut rows, total, meta) = match ctx
        .index
        .rows_of(BoardOrder::new(lb, dir), players, mode)
        .await
    {
        Ok(r) if r.total == 0 && history(&board) => {
            rows_from_store(ctx, lb, dir, players, mode, false).await?
        }
        Ok(r) => {
            let keys: Vec<RankKey> = r.rows.iter().map(|row| row.key.clone()).collect();
            known = names::known(&keys, r.cards, r.metadata);
            (r.rows, r.total, Provenance::now(Source::Redis, false))
        }
        Err(e) => {
            let degraded = rank_order_after(ctx, &board, &e).await?;
            rows_from_store(ctx, lb, dir, players, mode, degraded).await?
        }
    };
    rows.sort_by_key(|r| r.rank);
    let unknown = players
        .iter()
        .filter(|p| !rows.iter().any(|r| r.key.player == p.as_str()))
        .cloned()
        .collect();
    let mut entries: Vec<Entry> = rows
        .into_iter()
        .map(|r| Entry::new(r.place, r.key, None, board.scores))
        .collect();
    let from_index = meta.source == Source::Redis;
    let names_missing = !names::name(ctx, lb, &mut entries, known, from_index).await;
    Ok(EntriesReply {
        leaderboard_id: lb.clone(),
        rank_mode: mode,
        total,
        entries,
        unknown,
        meta: Provenance {
            names_missing,
            ..meta
        },
    })
}

/// The rows from DynamoDB: exact for players among the board's first [`COUNT_CAP`]
/// entries, estimated from the rank sketch past them (unique and competition places
/// are then the estimated rank; a dense place cannot be known: `rank_unavailable`).
async fn rows_from_store<S: RankedReads + SketchStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    dir: Direction,
    players: &[PlayerId],
    mode: RankMode,
    degraded: bool,
) -> Result<(Vec<PlayerRow>, u64, Provenance), ServiceError> {
    let (keys, head, est) = futures::try_join!(
        async { Ok::<_, ServiceError>(ctx.store.keys_of(lb, players).await?) },
        async {
            Ok(ctx
                .store
                .ranked_after(BoardOrder::new(lb, dir), None, COUNT_CAP)
                .await?)
        },
        estimate(&ctx.store, lb, dir, None),
    )?;
    let head_places = places(mode, Start::TOP, &head);
    let mut meta = Provenance::now(Source::Dynamodb, degraded).estimated(&est);
    let mut sketch = None;
    let mut rows = Vec::new();
    for key in keys.into_iter().flatten() {
        if let Some(i) = head.iter().position(|k| *k == key) {
            rows.push(PlayerRow {
                rank: i as u64 + 1,
                place: head_places[i],
                key,
            });
            continue;
        }
        if mode == RankMode::Dense {
            return Err(ServiceError::RankUnavailable(lb.clone()));
        }
        if sketch.is_none() {
            sketch = Some(
                ctx.store
                    .get_sketch(lb)
                    .await?
                    .ok_or_else(|| ServiceError::RankUnavailable(lb.clone()))?,
            );
        }
        let before = sketch
            .as_ref()
            .map_or(0, |sk| sk.before(&key.sort_key(dir)))
            .max(head.len() as u64);
        meta.rank_approximate = true;
        rows.push(PlayerRow {
            rank: before + 1,
            place: before + 1,
            key,
        });
    }
    Ok((rows, est.total, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_are_a_bounded_list_of_valid_distinct_ids() {
        let ids = parse_players(Some("a,b,a,c")).unwrap();
        let ids: Vec<&str> = ids.iter().map(PlayerId::as_str).collect();
        assert_eq!(ids, ["a", "b", "c"]);
        for bad in [None, Some(""), Some("a,,b"), Some("a,b c"), Some("a,")] {
            assert!(parse_players(bad).is_err(), "{bad:?} was accepted");
        }
        let hundred: Vec<String> = (0..MAX_PLAYERS).map(|i| format!("p{i}")).collect();
        assert_eq!(
            parse_players(Some(&hundred.join(","))).unwrap().len(),
            MAX_PLAYERS
        );
        let more = format!("{},x", hundred.join(","));
        assert!(parse_players(Some(&more)).is_err());
    }
}
