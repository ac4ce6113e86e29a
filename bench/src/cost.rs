//! What DynamoDB would bill per operation: each operation runs through the service's own
//! code against a DynamoDB endpoint behind `infra/local/meter.py`, which prices every
//! call from the items it carries and finds (the meter's doc says how), and the row is
//! the meter's total for that operation alone. Caches are warm (a Lambda container's
//! second request), as in production.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use leaderboard_core::service::boards::{CreateFamily, create_family};
use leaderboard_core::service::ingest::submit_score;
use leaderboard_core::service::moderation::{ban, remove};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::profiles::{self, Writer};
use leaderboard_core::service::reads;
use leaderboard_core::service::scores::{MatchBody, MatchResult, submit_match};
use leaderboard_core::service::seal;
use leaderboard_core::service::tournaments;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_rules::board::Policy;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankMode;
use leaderboard_rules::profile::ProfileBody;
use leaderboard_rules::tournament::Tournament;
use leaderboard_rules::window::Period;
use serde::Serialize;
use serde_json::json;

use leaderboard::wiring::AppContext;

use crate::board::{context, put_board};

/// The units one operation cost.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Bill {
    pub write_units: f64,
    /// Of `write_units`, what cancelled transactions and failed conditions were billed.
    pub cancelled_write_units: f64,
    pub read_units: f64,
    pub calls: u64,
}

/// Every row, by name (`cost.write_units.*` and `cost.read_units.*` in latest.json).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CostResults {
    /// Players on the board the degraded rank read counts on.
    pub degraded_board_players: u64,
    /// Players the sealed board recorded (`seal_per_1000_players` is scaled from it).
    pub sealed_players: u64,
    /// Members of the sealed tournament and league occurrences (the `_per_1000_members`
    /// rows are scaled from it).
    pub tournament_members: u64,
    pub write_units: BTreeMap<&'static str, f64>,
    /// Of `write_units`, what cancelled transactions and failed conditions cost, counted
    /// as if they wrote (an upper bound on what DynamoDB bills for them).
    pub cancelled_write_units: BTreeMap<&'static str, f64>,
    pub read_units: BTreeMap<&'static str, f64>,
    pub calls: BTreeMap<&'static str, u64>,
}

pub(crate) struct Meter {
    pub(crate) http: reqwest::Client,
    pub(crate) url: String,
}

impl Meter {
    async fn reset(&self) -> anyhow::Result<()> {
        self.http
            .post(format!("{}/__meter/reset", self.url))
            .send()
            .await?
            .error_for_status()?;
        Ok(())
    }

    async fn read(&self) -> anyhow::Result<Bill> {
        let v: serde_json::Value = self
            .http
            .get(format!("{}/__meter", self.url))
            .send()
            .await?
            .json()
            .await?;
        Ok(Bill {
            write_units: v["write_units"].as_f64().unwrap_or_default(),
            cancelled_write_units: v["cancelled_write_units"].as_f64().unwrap_or_default(),
            read_units: v["read_units"].as_f64().unwrap_or_default(),
            calls: v["calls"].as_u64().unwrap_or_default(),
        })
    }

    /// The bill of `op` alone.
    pub(crate) async fn bill<F, T>(&self, op: F) -> anyhow::Result<Bill>
    where
        F: std::future::Future<Output = anyhow::Result<T>>,
    {
        self.reset().await?;
        op.await?;
        self.read().await
    }
}

fn id<T>(parse: fn(&str) -> Result<T, leaderboard_rules::error::DomainError>, s: &str) -> T {
    parse(s).expect("a valid id")
}

fn submit(lb: &LeaderboardId, player: &str, m: &str, score: i64) -> SubmitScore {
    let player = id(PlayerId::parse, player);
    SubmitScore::new(lb.clone(), player, body(m, score), &bench()).expect("a valid submission")
}

fn result(game: &str, player: &str, m: &str, score: i64) -> MatchResult {
    MatchResult::new(MatchBody {
        subscores: None,
        metadata: None,
        game: Some(game.into()),
        mode: Some("cost".into()),
        region: Some("EU".into()),
        player_id: Some(player.into()),
        match_id: Some(m.into()),
        score: Some(serde_json::value::to_raw_value(&score).expect("a number")),
        event_ts: None,
    })
    .expect("a valid result")
}

fn reason() -> Reason {
    Reason::parse(ReasonBody {
        reason: Some(json!("cost")),
    })
    .expect("a reason")
}

async fn board(ctx: &AppContext, name: &str, policy: Policy) -> anyhow::Result<LeaderboardId> {
    let lb = id(LeaderboardId::parse, name);
    put_board(ctx, &lb, policy).await?;
    Ok(lb)
}

/// A BEST board with every judging integrity rule: a score range, a gain, a rate, the
/// top's factor and margin, a match's shortest duration.
async fn judged_board(ctx: &AppContext, name: &str) -> anyhow::Result<LeaderboardId> {
    let req = serde_json::from_value(json!({
        "leaderboard_id": name, "policy": "BEST",
        "integrity": {"min_score": 0, "max_score": 10000, "max_gain": 5000,
                      "max_results_per_minute": 4, "max_top_factor": 3,
                      "max_top_margin": 5000, "min_duration_seconds": 10},
    }))?;
    leaderboard_core::service::boards::create_board(&ctx.store, &ctx.index, req).await?;
    Ok(id(LeaderboardId::parse, name))
}

/// A BEST family of GLOBAL and EU over `periods`, its season `[start, end)` (ms).
async fn family(
    ctx: &AppContext,
    game: &str,
    periods: &[Period],
    season: (i64, i64),
    grace_seconds: i64,
) -> anyhow::Result<()> {
    let req: CreateFamily = serde_json::from_value(json!({
        "game": game, "mode": "cost", "policy": "BEST", "regions": ["EU"],
        "periods": periods, "grace_seconds": grace_seconds,
        "season": {"id": "s1", "start": season.0, "end": season.1},
    }))?;
    create_family(&ctx.store, req).await?;
    Ok(())
}

/// Runs every row against `meter_url` (the meter in front of the DynamoDB endpoint at
/// `dynamodb_url`, which loads the large boards unmetered), with the index on
/// `redis_url`; the degraded read and the seal are on boards of `players`.
pub async fn run(
    redis_url: &str,
    dynamodb_url: &str,
    meter_url: &str,
    players: u64,
) -> anyhow::Result<CostResults> {
    let degraded_players = players;
    let meter = Meter {
        http: leaderboard::adapters::tls::http().build()?,
        url: meter_url.trim_end_matches('/').to_owned(),
    };
    let table = format!("cost-{}", chrono::Utc::now().timestamp_millis());
    let ctx = context(redis_url, meter_url, &table).await?;
    let direct = context(redis_url, dynamodb_url, &table).await?;
    ctx.store
        .create_table()
        .await
        .context("create the cost table")?;
    let mut out = CostResults {
        degraded_board_players: degraded_players,
        ..CostResults::default()
    };
    let mut row = |name: &'static str, b: Bill| {
        println!(
            "{name:>28}: {:>5.1} write units ({:.1} cancelled), {:>5.1} read units, {} calls",
            b.write_units, b.cancelled_write_units, b.read_units, b.calls
        );
        out.write_units.insert(name, b.write_units);
        out.cancelled_write_units
            .insert(name, b.cancelled_write_units);
        out.read_units.insert(name, b.read_units);
        out.calls.insert(name, b.calls);
    };

    // One board: a player's first result, a better one, a worse one, the same match
    // again; a SUM board's second result.
    let best = board(&ctx, "cost-best", Policy::Best).await?;
    submit_score(&ctx, submit(&best, "warm", "w", 1)).await?;
    let go = |p: &'static str, m: &'static str, s: i64| {
        let (ctx, best) = (&ctx, &best);
        async move { Ok(submit_score(ctx, submit(best, p, m, s)).await?) }
    };
    row("first", meter.bill(go("p1", "m1", 100)).await?);
    row("improving", meter.bill(go("p1", "m2", 200)).await?);
    row("not_improving", meter.bill(go("p1", "m3", 50)).await?);
    row("retry", meter.bill(go("p1", "m3", 50)).await?);
    // A player past the receipts a row keeps: each result moves the oldest receipt out
    // to an item of its own, and a new match is looked up there too.
    go("p1", "m4", 60).await?;
    go("p1", "m5", 250).await?;
    row(
        "improving_past_kept",
        meter.bill(go("p1", "m6", 300)).await?,
    );
    row(
        "not_improving_past_kept",
        meter.bill(go("p1", "m7", 70)).await?,
    );
    row("retry_past_kept", meter.bill(go("p1", "m1", 100)).await?);
    // The same on a board with every integrity rule that judges (docs/integrity.md),
    // each result passing them: judging must cost nothing (the same rows as above).
    let judged = judged_board(&ctx, "cost-judged").await?;
    submit_score(&ctx, submit(&judged, "warm", "w", 1000)).await?;
    let go = |p: &'static str, m: &'static str, s: i64| {
        let (ctx, judged) = (&ctx, &judged);
        async move { Ok(submit_score(ctx, submit(judged, p, m, s)).await?) }
    };
    row("judged_first", meter.bill(go("p1", "m1", 1100)).await?);
    row("judged_improving", meter.bill(go("p1", "m2", 1200)).await?);
    row(
        "judged_not_improving",
        meter.bill(go("p1", "m3", 50)).await?,
    );
    row("judged_retry", meter.bill(go("p1", "m3", 50)).await?);
    // And a result the rules hold: its row and the queue item, in one transaction.
    row("held", meter.bill(go("p2", "h1", 90_000)).await?);
    let sum = board(&ctx, "cost-sum", Policy::Sum).await?;
    submit_score(&ctx, submit(&sum, "p1", "s1", 10)).await?;
    row(
        "sum",
        meter
            .bill(async { Ok(submit_score(&ctx, submit(&sum, "p1", "s2", 10)).await?) })
            .await?,
    );

    // Families: GLOBAL and EU over 3 periods (6 boards) and over 5 (10 boards); the
    // boards exist (another player played first), and the player is new to all.
    let six = [Period::AllTime, Period::Weekly, Period::Daily];
    let ten = [
        Period::AllTime,
        Period::Season,
        Period::Monthly,
        Period::Weekly,
        Period::Daily,
    ];
    for (game, periods, name) in [
        ("cost6", &six[..], "family_6_first"),
        ("cost10", &ten[..], "family_10_first"),
    ] {
        family(
            &ctx,
            game,
            periods,
            (0, leaderboard_rules::time::MAX_TS_MS),
            300,
        )
        .await?;
        submit_match(&ctx, result(game, "warm", "w", 1)).await?;
        let bill = meter
            .bill(async { Ok(submit_match(&ctx, result(game, "p1", "m1", 100)).await?) })
            .await?;
        row(name, bill);
        let again = meter
            .bill(async { Ok(submit_match(&ctx, result(game, "p1", "m2", 200)).await?) })
            .await?;
        row(
            if game == "cost6" {
                "family_6_improving"
            } else {
                "family_10_improving"
            },
            again,
        );
    }

    tournament_rows(&ctx, &meter, &mut row).await?;
    profile_rows(&ctx, &meter, &mut row).await?;

    // A banned player's result on the 6-board family, refused on every board.
    let banned = id(PlayerId::parse, "cheat");
    let op = Operator("cost".into());
    let deadline = Instant::now() + Duration::from_secs(60);
    ban::ban(&ctx, "cost6", &banned, reason(), &op, None, deadline).await?;
    row(
        "banned_family_6",
        meter
            .bill(async {
                let _refused = submit_match(&ctx, result("cost6", "cheat", "c1", 5)).await;
                Ok(())
            })
            .await?,
    );

    // A removal from one board.
    row(
        "removal",
        meter
            .bill(async {
                let p1 = id(PlayerId::parse, "p1");
                Ok(remove::remove_entry(&ctx, &best, &p1, reason(), &op).await?)
            })
            .await?,
    );

    // A rank read served from DynamoDB (the index unreachable) on a board of
    // `degraded_players`, for a player in the middle.
    let big = board(&ctx, "cost-degraded", Policy::Best).await?;
    for i in 0..degraded_players {
        submit_score(&direct, submit(&big, &format!("d{i:07}"), "m", i as i64)).await?;
    }
    let down = context("redis://127.0.0.1:1", meter_url, &table).await?;
    let middle = id(PlayerId::parse, &format!("d{:07}", degraded_players / 2));
    let viewer = Caller::default();
    let read =
        || async { Ok(reads::rank(&down, &viewer, &big, &middle, 5, RankMode::Unique).await?) };
    read().await?;
    row("degraded_rank_read", meter.bill(read()).await?);

    // Sealing a season's GLOBAL board, per 1,000 players: the season ends once they
    // are loaded (unmetered), and the seal reads and records them (metered). Twice: a
    // board that keeps its rank order in DynamoDB (walked through `by_rank`) and one
    // that does not (a family's DAILY by default: its rows read whole and sorted).
    let load_ms = 5_000 + 20 * players as i64;
    let end = leaderboard_rules::time::now_ms() + load_ms;
    let season = (end - 3_600_000, end);
    family(&ctx, "costseal", &[Period::Season], season, 0).await?;
    let rows_only: CreateFamily = serde_json::from_value(json!({
        "game": "costsealrows", "mode": "cost", "policy": "BEST", "regions": ["EU"],
        "periods": [Period::Season], "grace_seconds": 0, "rank_index_periods": [],
        "season": {"id": "s1", "start": season.0, "end": season.1},
    }))?;
    create_family(&ctx.store, rows_only).await?;
    let (mut ranked, mut sorted) = (None, None);
    for i in 0..players {
        let (p, s) = (format!("s{i:07}"), 1 + i as i64);
        let (a, b) = tokio::try_join!(
            submit_match(&direct, result("costseal", &p, "m", s)),
            submit_match(&direct, result("costsealrows", &p, "m", s)),
        )?;
        let global = |r: leaderboard_core::service::scores::MatchReply| {
            r.results
                .into_iter()
                .find(|r| r.scope == "GLOBAL")
                .and_then(|r| r.leaderboard_id)
        };
        // The first result names the boards: on a slow machine the last ones may come
        // after the season's end and name none (the seal then records fewer players).
        (ranked, sorted) = (ranked.or(global(a)), sorted.or(global(b)));
    }
    let wait = end + 1_000 - leaderboard_rules::time::now_ms();
    tokio::time::sleep(Duration::from_millis(wait.max(0) as u64)).await;
    let mut recorded = 0;
    for (name, board) in [
        ("seal_per_1000_players", ranked),
        ("seal_without_rank_order_per_1000_players", sorted),
    ] {
        let board = board.context("the season board")?;
        let (bill, n, _) = seal_bill(&ctx, &meter, std::slice::from_ref(&board)).await?;
        row(name, bill.per_1000(n));
        recorded = n;
    }
    out.sealed_players = recorded;
    // Last week's occurrence of a league and of the same tournament without one, each
    // of `members` players in cohorts of 50: sealing them, per 1,000 members (the
    // league's settle is the difference).
    let members = players.min(1_000);
    for (name, league) in [
        ("tournament_seal_per_1000_members", false),
        ("league_settle_per_1000_members", true),
    ] {
        let id = format!("costweek{}", u8::from(league));
        let boards = last_week(&direct, &id, league, members).await?;
        let (bill, _, events) = seal_bill(&ctx, &meter, &boards).await?;
        if league {
            let settled = events.settled().len();
            anyhow::ensure!(settled == boards.len() - 1, "{settled} cohorts settled");
        }
        row(name, bill.per_1000(members));
    }
    out.tournament_members = members;
    let before = out.read_units_before_write_per_board();
    out.read_units.insert("before_write_per_board", before);
    Ok(out)
}

/// A tournament (cohorts of 50, three attempts): a player's join, first result, a
/// better one, the same match again, then a fourth result refused (attempts used up).
async fn tournament_rows(
    ctx: &AppContext,
    meter: &Meter,
    row: &mut impl FnMut(&'static str, Bill),
) -> anyhow::Result<()> {
    tournaments::create(ctx, &Operator("cost".into()), cup("costcup", false)).await?;
    let warm = id(PlayerId::parse, "warm");
    tournaments::join(ctx, "costcup", &warm).await?;
    tournaments::submit(ctx, "costcup", &warm, body("w", 1), &bench()).await?;
    let p = id(PlayerId::parse, "p1");
    row(
        "tournament_join",
        meter
            .bill(async { Ok(tournaments::join(ctx, "costcup", &p).await?) })
            .await?,
    );
    let go = |m: &'static str, s: i64| {
        let p = &p;
        async move { Ok(tournaments::submit(ctx, "costcup", p, body(m, s), &bench()).await?) }
    };
    row("tournament_first", meter.bill(go("m1", 100)).await?);
    row("tournament_improving", meter.bill(go("m2", 200)).await?);
    row("tournament_retry", meter.bill(go("m2", 200)).await?);
    go("m3", 50).await?;
    let refused = meter
        .bill(async {
            let refused = tournaments::submit(ctx, "costcup", &p, body("m4", 300), &bench()).await;
            anyhow::ensure!(refused.is_err(), "a fourth result is refused: {refused:?}");
            Ok(())
        })
        .await?;
    row("tournament_attempts_used_up", refused);
    Ok(())
}

/// A player's profile writes and what the name index (`by_name`) adds to each: a first
/// profile with a name, another write that keeps the name, a rename, an operator's reset
/// of the name, and a profile without a name (docs/cost.md).
async fn profile_rows(
    ctx: &AppContext,
    meter: &Meter,
    row: &mut impl FnMut(&'static str, Bill),
) -> anyhow::Result<()> {
    let p = id(PlayerId::parse, "named");
    let put = |name: Option<&'static str>, country: &'static str| {
        let p = &p;
        let body = ProfileBody {
            display_name: name.map(str::to_owned),
            avatar: None,
            country: Some(country.to_owned()),
            attributes: None,
        };
        async move { Ok(profiles::put(ctx, p, body, Writer::Server).await?) }
    };
    row(
        "profile_first_named",
        meter.bill(put(Some("Zoë Ångström"), "SE")).await?,
    );
    row(
        "profile_same_name",
        meter.bill(put(Some("Zoë Ångström"), "NO")).await?,
    );
    row(
        "profile_renamed",
        meter.bill(put(Some("Zoe Bright"), "NO")).await?,
    );
    let reset = async {
        let body: profiles::ResetBody =
            serde_json::from_value(json!({"reset": ["display_name"], "reason": "cost"}))?;
        Ok(profiles::reset(ctx, &p, body, &Operator("cost".into())).await?)
    };
    row("profile_name_reset", meter.bill(reset).await?);
    let q = id(PlayerId::parse, "nameless");
    let nameless = async {
        let body = ProfileBody {
            country: Some("SE".into()),
            ..ProfileBody::default()
        };
        Ok(profiles::put(ctx, &q, body, Writer::Server).await?)
    };
    row("profile_first_unnamed", meter.bill(nameless).await?);
    Ok(())
}

/// A weekly tournament of game `id` with cohorts of 50 and three attempts; with a
/// league of three tiers if asked.
fn cup(id: &str, league: bool) -> Tournament {
    let mut def = json!({
        "tournament_id": id, "game": id, "mode": "cost", "title": "Cost cup",
        "schedule": {"period": "WEEKLY"}, "cohort_size": 50, "max_attempts": 3,
        "grace_seconds": 0,
    });
    if league {
        def["league"] = json!({"start_tier": "silver", "tiers": [
            {"id": "bronze", "promote": {"percent": 20},
             "rewards": [{"from_rank": 1, "to_rank": 3, "reward": "bronze-chest"}]},
            {"id": "silver", "promote": {"count": 5}, "demote": {"percent": 10},
             "rewards": [{"from_rank": 1, "to_rank": 5, "reward": "silver-chest"}]},
            {"id": "gold", "demote": {"count": 4},
             "rewards": [{"from_rank": 1, "to_rank": 10, "reward": "gold-chest"}]}]});
    }
    serde_json::from_value(def).expect("a tournament definition")
}

fn body(m: &str, score: i64) -> leaderboard_core::service::write::request::ScoreBody {
    leaderboard_core::service::write::request::ScoreBody {
        op: None,
        reason: None,
        subscores: None,
        metadata: None,
        new_score: Some(serde_json::value::to_raw_value(&score).expect("a number")),
        match_id: Some(json!(m)),
        event_ts: None,
    }
}

fn bench() -> Operator {
    Operator("bench".into())
}

/// Tournament `id` (a league if asked) played last week by `members` players, each
/// joined and with one result (unmetered, the clock set into last week); the boards
/// its seal must seal: the occurrence's and each cohort's.
async fn last_week(
    ctx: &AppContext,
    id: &str,
    league: bool,
    members: u64,
) -> anyhow::Result<Vec<LeaderboardId>> {
    use futures::StreamExt as _;
    let t = cup(id, league);
    let this_week = (t.schedule.occurrence_at(leaderboard_rules::time::now_ms()))
        .map_err(|n| anyhow::anyhow!("a weekly tournament always runs: {n:?}"))?;
    let last_week = this_week.start - (this_week.end - this_week.start);
    tournaments::create(ctx, &bench(), t).await?;
    ctx.clock.set(Some(last_week + 3_600_000));
    let played = futures::stream::iter(0..members)
        .map(|i| async move {
            let p = id_of(i);
            let (joined, _) = tournaments::join(ctx, id, &p).await?;
            tournaments::submit(ctx, id, &p, body("m", (i * 37 % 1_000) as i64), &bench()).await?;
            Ok::<_, anyhow::Error>(joined)
        })
        .buffer_unordered(16)
        .collect::<Vec<_>>()
        .await;
    ctx.clock.set(None);
    let mut boards = std::collections::BTreeSet::new();
    for joined in played {
        let joined = joined?;
        boards.insert(joined.leaderboard_id);
        boards.extend(joined.cohort_leaderboard_id);
    }
    Ok(boards.into_iter().collect())
}

fn id_of(i: u64) -> PlayerId {
    id(PlayerId::parse, &format!("t{i:05}"))
}

/// What sealing `boards` (closed windows) costs, unscaled, how many players the last run
/// of each recorded (summed), and the events the seals published.
async fn seal_bill(
    ctx: &AppContext,
    meter: &Meter,
    boards: &[LeaderboardId],
) -> anyhow::Result<(Bill, u64, leaderboard_core::memory::MemoryEvents)> {
    let events = leaderboard_core::memory::MemoryEvents::default();
    let settled = seal::SealSettings {
        settle: Duration::ZERO,
    };
    let mut recorded = 0;
    let sealed = meter
        .bill(async {
            for board in boards {
                loop {
                    let far = Instant::now() + Duration::from_secs(600);
                    let report = seal::seal(&ctx.store, &events, settled, board, far).await?;
                    if report.done {
                        recorded += report.boards.iter().map(|b| b.recorded).sum::<u64>();
                        break;
                    }
                }
            }
            Ok(())
        })
        .await?;
    Ok((sealed, recorded, events))
}

impl Bill {
    /// This bill scaled from `members` to 1,000 (calls as counted).
    fn per_1000(self, members: u64) -> Self {
        let per = 1_000.0 / (members.max(1) as f64);
        Self {
            write_units: self.write_units * per,
            cancelled_write_units: self.cancelled_write_units * per,
            read_units: self.read_units * per,
            calls: self.calls,
        }
    }
}

impl CostResults {
    /// The reads a result makes before it writes, per board it lands on (the most of the
    /// single-board and family rows).
    pub fn read_units_before_write_per_board(&self) -> f64 {
        let per =
            |name: &str, boards: f64| self.read_units.get(name).copied().unwrap_or(0.0) / boards;
        [
            per("improving", 1.0),
            per("not_improving", 1.0),
            per("family_6_first", 6.0),
            per("family_10_first", 10.0),
        ]
        .into_iter()
        .fold(0.0, f64::max)
    }
}
