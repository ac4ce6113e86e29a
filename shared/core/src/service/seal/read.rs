//! Reads of sealed windows: a board's results (`GET /leaderboards/{lb}/results`) and a
//! player's final place in each past window of a family
//! (`GET /games/{game}/modes/{mode}/players/{p}/history`), newest first.

use futures::future::try_join_all;
use serde::Serialize;

use crate::service::ServiceError;
use crate::store::{
    HistoryQuery, HistoryRow, Placing, ProfileStore, SealStore, SealedWindow, StandingStore,
};
use leaderboard_rules::decimal::Shown;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::page::limit_within;
use leaderboard_rules::profile::Card;
use leaderboard_rules::time::rfc3339_ms;
use leaderboard_rules::window::{GLOBAL, Period, parse_name};

/// Rows per history page by default, and at most.
pub(crate) const HISTORY_LIMIT: u64 = 20;
pub(crate) const HISTORY_MAX: u64 = 100;
/// The periods whose windows are sealed, in the order rows ending at the same moment
/// are listed. An ALL_TIME board's windows are its resets' archives.
const SEALED_PERIODS: [Period; 5] = [
    Period::Season,
    Period::Monthly,
    Period::Weekly,
    Period::Daily,
    Period::AllTime,
];

/// A sealed window as replies show it.
#[derive(Debug, Serialize)]
pub struct WindowView {
    pub leaderboard_id: LeaderboardId,
    pub period: Period,
    pub window: String,
    pub starts_at: String,
    pub ends_at: String,
}

impl WindowView {
    fn of(w: &SealedWindow) -> Self {
        Self {
            leaderboard_id: w.leaderboard_id.clone(),
            period: w.period,
            window: w.window.clone(),
            starts_at: rfc3339_ms(w.start),
            ends_at: rfc3339_ms(w.end),
        }
    }
}

/// One place in a board's results.
#[derive(Debug, Serialize)]
pub struct PlacingView {
    pub rank: u64,
    /// Absent for an erased player (their place stays).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player_id: Option<PlayerId>,
    /// Written as the board wrote scores (docs/decimals.md).
    pub score: Shown,
    /// The tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    pub reached_at: String,
    /// The player's current display name, avatar and country (null for an erased
    /// player or one without a profile): read now, so a rename shows.
    #[serde(flatten)]
    pub card: Card,
    /// The metadata of the result that set the player's final standing.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `GET /leaderboards/{lb}/results`.
#[derive(Debug, Serialize)]
pub struct ResultsReply {
    #[serde(flatten)]
    pub window: WindowView,
    pub game: String,
    pub mode: String,
    pub scope: String,
    pub sealed_at: String,
    /// Participants.
    pub total: u64,
    /// The top, at most 1,000.
    pub entries: Vec<PlacingView>,
}

/// A board's sealed results; 404 `not_sealed` before its window is sealed.
pub async fn results<S: StandingStore + SealStore + ProfileStore>(
    store: &S,
    lb: &LeaderboardId,
) -> Result<ResultsReply, ServiceError> {
    let r = store
        .get_results(lb)
        .await?
        .ok_or_else(|| ServiceError::NotSealed(lb.clone()))?;
    let named: Vec<PlayerId> = r.top.iter().filter_map(|p| p.player_id.clone()).collect();
    let standings: Vec<_> = named.iter().map(|p| (lb.clone(), p.clone())).collect();
    // One BatchGetItem per 100 places each: the cards now, the metadata of the standings
    // the window closed on (which no longer change; an erasure deletes them).
    let (cards, metadata) =
        futures::try_join!(store.get_cards(&named), store.get_metadata(&standings))?;
    let (mut cards, mut metadata) = (cards.into_iter(), metadata.into_iter());
    let entries = r
        .top
        .iter()
        .map(|p: &Placing| PlacingView {
            rank: p.rank,
            player_id: p.player_id.clone(),
            score: r.window.scores.show_scaled(p.score),
            subscores: r.window.scores.tiebreaks.shown(&p.ties),
            reached_at: rfc3339_ms(p.reached_at),
            card: match p.player_id {
                Some(_) => cards.next().map(|c| c.card).unwrap_or_default(),
                None => Card::default(),
            },
            metadata: match p.player_id {
                Some(_) => metadata.next().flatten().map(|m| m.to_object()),
                None => None,
            },
        })
        .collect();
    Ok(ResultsReply {
        window: WindowView::of(&r.window),
        game: r.window.game,
        mode: r.window.mode,
        scope: r.window.scope,
        sealed_at: rfc3339_ms(r.sealed_at),
        total: r.total,
        entries,
    })
}

/// A validated history request.
#[derive(Debug)]
pub struct HistoryRequest {
    pub player: PlayerId,
    pub game: String,
    pub mode: String,
    pub scope: String,
    /// One period, or every sealed one.
    pub period: Option<Period>,
    pub limit: u32,
    /// Where the previous page ended: rows after it.
    pub after: Option<(i64, Period)>,
}

impl HistoryRequest {
    /// From the route's path and query parameters.
    pub fn parse(
        game: &str,
        mode: &str,
        player: &str,
        scope: Option<&str>,
        period: Option<&str>,
        limit: Option<&str>,
        cursor: Option<&str>,
    ) -> Result<Self, DomainError> {
        let period = period.map(parse_period).transpose()?;
        Ok(Self {
            player: PlayerId::parse(player)?,
            game: parse_name("game", game)?,
            mode: parse_name("mode", mode)?,
            scope: scope.map_or(
                Ok(GLOBAL.to_owned()),
                leaderboard_rules::tournament::history_scope,
            )?,
            period,
            limit: limit_within(limit, HISTORY_LIMIT, HISTORY_MAX)? as u32,
            after: cursor.map(parse_cursor).transpose()?,
        })
    }
}

/// A sealed period: a built-in one with windows, or a family's cron schedule by its id
/// (a rolling schedule's board never closes, so has no history).
fn parse_period(raw: &str) -> Result<Period, DomainError> {
    match Period::parse("period", raw) {
        Ok(p) if SEALED_PERIODS.contains(&p) || p.schedule().is_some() => Ok(p),
        _ => Err(DomainError::invalid(
            "period",
            "must be DAILY, WEEKLY, MONTHLY, SEASON, ALL_TIME or a schedule's id",
        )),
    }
}

/// A history cursor: `{end ms}.{PERIOD}` of the last row of the previous page, the end
/// 1 to 15 digits (openapi.yaml's `HistoryCursor`).
fn parse_cursor(raw: &str) -> Result<(i64, Period), DomainError> {
    let (end, period) = raw.split_once('.').ok_or(DomainError::InvalidCursor)?;
    if !(1..=15).contains(&end.len()) || !end.bytes().all(|b| b.is_ascii_digit()) {
        return Err(DomainError::InvalidCursor);
    }
    let end = end.parse().map_err(|_| DomainError::InvalidCursor)?;
    let period = parse_period(period).map_err(|_| DomainError::InvalidCursor)?;
    Ok((end, period))
}

/// One window of a player's history.
#[derive(Debug, Serialize)]
pub struct HistoryEntry {
    #[serde(flatten)]
    pub window: WindowView,
    pub rank: u64,
    /// Written as the window's board wrote scores (docs/decimals.md).
    pub score: Shown,
    /// The tie-break values, on a board with columns (docs/tiebreaks.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscores: Option<Vec<i64>>,
    pub reached_at: String,
    /// The metadata of the result that set the player's final standing in the window.
    pub metadata: Option<serde_json::Map<String, serde_json::Value>>,
    /// A league cohort's: the tier before and after its seal, and the reward.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub league: Option<crate::store::LeagueRow>,
}

/// `GET /games/{game}/modes/{mode}/players/{p}/history`.
#[derive(Debug, Serialize)]
pub struct HistoryReply {
    pub player_id: PlayerId,
    /// The player's current display name, avatar and country (null without a profile).
    #[serde(flatten)]
    pub card: Card,
    pub game: String,
    pub mode: String,
    pub scope: String,
    /// Newest window first.
    pub windows: Vec<HistoryEntry>,
    /// Pass as `cursor` for the next page; absent on the last.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// Rows order newest window first; at the same end, in [`SEALED_PERIODS`] order.
fn order(row: &HistoryRow) -> (std::cmp::Reverse<i64>, usize) {
    let p = SEALED_PERIODS
        .iter()
        .position(|p| *p == row.window.period)
        .unwrap_or(0);
    (std::cmp::Reverse(row.window.end), p)
}

/// A player's final places in the family's sealed windows, newest first: one query per
/// period asked for, merged.
pub async fn history<S: StandingStore + SealStore + ProfileStore>(
    store: &S,
    req: HistoryRequest,
) -> Result<HistoryReply, ServiceError> {
    let periods: Vec<Period> = req.period.map_or(SEALED_PERIODS.to_vec(), |p| vec![p]);
    let rank_of = |p: Period| SEALED_PERIODS.iter().position(|q| *q == p).unwrap_or(0);
    let queries = periods.iter().map(|&period| {
        // After (end, p): an earlier end, or the same end and a period listed after p.
        let end_at_most = req.after.map(|(end, p)| {
            if rank_of(period) > rank_of(p) {
                end
            } else {
                end - 1
            }
        });
        let q = HistoryQuery {
            player: &req.player,
            game: &req.game,
            mode: &req.mode,
            scope: &req.scope,
            period,
            end_at_most,
            limit: req.limit + 1,
        };
        async move { store.history(&q).await }
    });
    let mut rows: Vec<HistoryRow> = try_join_all(queries).await?.into_iter().flatten().collect();
    rows.sort_by_key(order);
    let more = rows.len() > req.limit as usize;
    rows.truncate(req.limit as usize);
    let next_cursor = rows
        .last()
        .filter(|_| more)
        .map(|r| format!("{}.{}", r.window.end, r.window.period.as_str()));
    let standings: Vec<_> = rows
        .iter()
        .map(|r| (r.window.leaderboard_id.clone(), req.player.clone()))
        .collect();
    let (profile, metadata) = futures::try_join!(
        store.get_profile(&req.player),
        store.get_metadata(&standings)
    )?;
    Ok(HistoryReply {
        card: profile.profile.card,
        windows: rows
            .iter()
            .zip(metadata)
            .map(|(r, md)| HistoryEntry {
                window: WindowView::of(&r.window),
                rank: r.rank,
                score: r.window.scores.show_scaled(r.score),
                subscores: r.window.scores.tiebreaks.shown(&r.ties),
                reached_at: rfc3339_ms(r.reached_at),
                metadata: md.map(|m| m.to_object()),
                league: r.league.clone(),
            })
            .collect(),
        player_id: req.player,
        game: req.game,
        mode: req.mode,
        scope: req.scope,
        next_cursor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_cursor_is_exactly_what_the_document_says() {
        assert_eq!(
            parse_cursor("1763769600000.DAILY").ok(),
            Some((1_763_769_600_000, Period::Daily))
        );
        assert_eq!(parse_cursor("0.SEASON").ok(), Some((0, Period::Season)));
        // An ALL_TIME board's windows are its resets' archives.
        assert_eq!(parse_cursor("5.ALL_TIME").ok(), Some((5, Period::AllTime)));
        // A cron schedule's windows page by its id (docs/schedules.md).
        let nightly = Period::parse("period", "nightly").unwrap();
        assert_eq!(parse_cursor("5.nightly").ok(), Some((5, nightly)));
        for bad in [
            "",
            ".DAILY",
            "+5.DAILY",
            "-5.DAILY",
            "1234567890123456.DAILY",
            "5.Daily",
            "5.9to5",
            "5",
            "5.DAILY.x",
        ] {
            assert!(parse_cursor(bad).is_err(), "{bad} was taken");
        }
    }
}
