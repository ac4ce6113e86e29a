//! Board families: declared once, their windows' boards created by the first write.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use tracing::instrument;

use super::Created;
use crate::service::ServiceError;
use crate::store::BoardStore;
use leaderboard_rules::board::{Board, BoardStatus, BoardWindow, Policy, dense_unless_asked};
use leaderboard_rules::decimal::{ScoreFormat, Style};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::family::{Family, default_closing_lead_ms};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::reward::RewardTable;
use leaderboard_rules::schedule::Schedule;
use leaderboard_rules::tiebreak::Columns;
use leaderboard_rules::time::{now_ms, parse_ts, rfc3339_ms};
use leaderboard_rules::window::{GLOBAL, Period, Season, parse_name};

/// Body of `POST /families`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CreateFamily {
    pub game: String,
    pub mode: String,
    #[serde(default)]
    pub policy: Policy,
    #[serde(default)]
    pub regions: Vec<String>,
    pub periods: Vec<Period>,
    pub season: Option<SeasonBody>,
    /// Seconds after a window's end during which late results are still accepted.
    #[serde(default = "default_grace_seconds")]
    pub grace_seconds: i64,
    /// Whether the family's boards keep dense ranks (default false).
    #[serde(default = "dense_unless_asked")]
    pub dense_ranks: bool,
    /// The periods whose boards keep their rank order in DynamoDB (default: every
    /// period but DAILY; see [`Board::rank_index`]).
    #[serde(default)]
    pub rank_index_periods: Option<Vec<Period>>,
    /// Decimal places of its boards' scores, 0 to 6 (default 0; docs/decimals.md).
    pub decimals: Option<i64>,
    /// How replies write a decimal board's scores: `NUMBER` (default) or `STRING`.
    pub score_format: Option<Style>,
    /// Tie-break columns after the score, each `ASC` or `DESC` (at most 3;
    /// docs/tiebreaks.md).
    pub tiebreaks: Option<serde_json::Value>,
    /// The family's own periods: crons in time zones and rolling windows
    /// (docs/schedules.md).
    pub schedules: Option<serde_json::Value>,
    /// How long before a window's end `leaderboard.window.closing` goes out (default
    /// 900: 15 minutes; a minute to a week).
    pub closing_lead_seconds: Option<i64>,
    /// The rules that hold a suspicious result for review, on each of its boards
    /// (docs/integrity.md).
    pub integrity: Option<serde_json::Value>,
    /// What its windows' places earn when they seal (docs/rewards.md).
    pub rewards: Option<serde_json::Value>,
}

/// The periods that keep a rank order in DynamoDB unless the family says: all but
/// DAILY. A day's board is read live from Redis, briefly, and costs the most to index:
/// every player's first result of the day adds an entry (docs/cost.md).
fn ranked_unless_asked(periods: &[Period]) -> Vec<Period> {
    periods
        .iter()
        .copied()
        .filter(|p| *p != Period::Daily)
        .collect()
}

fn default_grace_seconds() -> i64 {
    300
}

/// A season as the API takes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SeasonBody {
    pub id: String,
    pub start: serde_json::Value,
    pub end: serde_json::Value,
}

/// A family as the API shows it, with the ids of the windows open now.
#[derive(Debug, Serialize)]
pub struct FamilyView {
    pub game: String,
    pub mode: String,
    pub policy: Policy,
    pub regions: Vec<String>,
    pub periods: Vec<Period>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub season: Option<SeasonView>,
    pub grace_seconds: i64,
    pub dense_ranks: bool,
    pub rank_index_periods: Vec<Period>,
    pub decimals: u8,
    pub score_format: Style,
    #[serde(skip_serializing_if = "Columns::is_empty")]
    pub tiebreaks: Columns,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedules: Vec<serde_json::Value>,
    pub closing_lead_seconds: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub integrity: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rewards: Option<RewardTable>,
    /// scope -> period -> board id of the window that contains now.
    pub current: BTreeMap<String, BTreeMap<Period, LeaderboardId>>,
}

#[derive(Debug, Serialize)]
pub struct SeasonView {
    pub id: String,
    pub start: String,
    pub end: String,
}

impl FamilyView {
    pub(super) fn at(f: Family, now: i64) -> Self {
        let mut current: BTreeMap<String, BTreeMap<Period, LeaderboardId>> = BTreeMap::new();
        for scope in std::iter::once(GLOBAL).chain(f.regions.iter().map(String::as_str)) {
            for period in f.all_periods() {
                if let Ok(w) = f.window_of(period, now) {
                    current
                        .entry(scope.to_owned())
                        .or_default()
                        .insert(period, f.board_id(scope, &w));
                }
            }
        }
        let rank_index_periods = f
            .rank_index_periods
            .clone()
            .unwrap_or_else(|| f.periods.clone());
        Self {
            rewards: f.rewards.clone(),
            integrity: f.integrity.as_ref().map(|i| i.view(f.scores)),
            season: f.season.as_ref().map(|s| SeasonView {
                id: s.id.clone(),
                start: rfc3339_ms(s.start),
                end: rfc3339_ms(s.end),
            }),
            game: f.game,
            mode: f.mode,
            policy: f.policy,
            regions: f.regions,
            periods: f.periods,
            grace_seconds: f.grace_ms / 1000,
            dense_ranks: f.dense_ranks,
            rank_index_periods,
            decimals: f.scores.decimals.get(),
            score_format: f.scores.style,
            tiebreaks: f.scores.tiebreaks,
            schedules: f.schedules.iter().map(Schedule::view).collect(),
            closing_lead_seconds: f.closing_lead_ms / 1000,
            current,
        }
    }
}

impl CreateFamily {
    /// The body `{"game", "mode", "policy", "regions", "periods"}` with every other field
    /// at the API's default (set the public fields to differ).
    pub fn new(
        game: &str,
        mode: &str,
        policy: Policy,
        regions: &[&str],
        periods: &[Period],
    ) -> Self {
        CreateFamily {
            game: game.to_owned(),
            mode: mode.to_owned(),
            policy,
            regions: regions.iter().map(|r| (*r).to_owned()).collect(),
            periods: periods.to_vec(),
            season: None,
            grace_seconds: default_grace_seconds(),
            dense_ranks: dense_unless_asked(),
            rank_index_periods: None,
            decimals: None,
            score_format: None,
            tiebreaks: None,
            schedules: None,
            closing_lead_seconds: None,
            integrity: None,
            rewards: None,
        }
    }

    fn into_family(self) -> Result<Family, DomainError> {
        let season = self
            .season
            .map(|s| {
                Ok::<_, DomainError>(Season {
                    id: s.id,
                    start: parse_ts("season.start", &s.start)?,
                    end: parse_ts("season.end", &s.end)?,
                })
            })
            .transpose()?;
        let schedules = Schedule::asked(self.schedules.as_ref())?;
        let rank_index_periods = self.rank_index_periods.unwrap_or_else(|| {
            let own = schedules.iter().map(|s| Period::Custom(s.id));
            ranked_unless_asked(&self.periods)
                .into_iter()
                .chain(own)
                .collect()
        });
        let scores = ScoreFormat::asked(self.decimals, self.score_format, self.tiebreaks.as_ref())?;
        Family {
            integrity: super::board::asked_integrity(self.integrity, scores)?,
            rewards: RewardTable::asked(self.rewards)?,
            game: self.game,
            mode: self.mode,
            policy: self.policy,
            regions: self.regions,
            periods: self.periods,
            season,
            grace_ms: self.grace_seconds.saturating_mul(1000),
            dense_ranks: self.dense_ranks,
            rank_index_periods: Some(rank_index_periods),
            scores,
            schedules,
            closing_lead_ms: (self.closing_lead_seconds)
                .map_or(default_closing_lead_ms(), |s| s.saturating_mul(1000)),
        }
        .validated()
    }
}

/// Declares a board family. The same settings again return the existing family;
/// different settings are a [`ServiceError::FamilyConflict`].
#[instrument(skip(store, req), fields(game = %req.game, mode = %req.mode))]
pub async fn create_family<S: BoardStore>(
    store: &S,
    req: CreateFamily,
) -> Result<Created<FamilyView>, ServiceError> {
    let family = req.into_family()?;
    let now = now_ms();
    match store.create_family(&family).await? {
        None => Ok(Created::New(FamilyView::at(family, now))),
        Some(existing) if existing == family => {
            Ok(Created::Existing(FamilyView::at(existing, now)))
        }
        Some(existing) => Err(ServiceError::FamilyConflict {
            game: existing.game,
            mode: existing.mode,
        }),
    }
}

/// Reads a family with the ids of its current windows.
pub async fn get_family<S: BoardStore>(
    store: &S,
    game: &str,
    mode: &str,
) -> Result<FamilyView, ServiceError> {
    let (game, mode) = (parse_name("game", game)?, parse_name("mode", mode)?);
    store
        .get_family(&game, &mode)
        .await?
        .map(|f| FamilyView::at(f, now_ms()))
        .ok_or(ServiceError::FamilyNotFound { game, mode })
}

/// The board of `family` for `scope` and `window`, as its first write creates it.
pub fn family_board(
    family: &Family,
    scope: &str,
    window: leaderboard_rules::window::TimeWindow,
    now: i64,
) -> Board {
    let rank_index = family.rank_index(window.period);
    let rolling_ms = (window.period.schedule())
        .and_then(|id| family.schedule(id))
        .and_then(Schedule::rolling_ms);
    Board {
        tournament: None,
        leaderboard_id: family.board_id(scope, &window),
        policy: family.policy,
        status: BoardStatus::Active,
        created_at: now,
        window: Some(BoardWindow {
            game: family.game.clone(),
            mode: family.mode.clone(),
            scope: scope.to_owned(),
            window,
            grace_ms: family.grace_ms,
            rolling_ms,
        }),
        sealed_at: None,
        dense_ranks: family.dense_ranks,
        rank_index,
        scores: family.scores,
        integrity: family.integrity.clone(),
        reset: None,
        rewards: None,
    }
}
