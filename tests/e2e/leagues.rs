//! Leagues: two weekly occurrences of a league with 3 tiers and 160 players in
//! cohorts of 16, played through the service on the real DynamoDB endpoint and
//! redis-server, every tier change and reward checked against a model written here
//! from the rules in docs/leagues.md (not from `League::settle`). The first week's seal
//! is cut off mid-walk (a standing's write fails, through `infra/local/meter.py`) and run
//! again: the same outcome, one `league.settled` per cohort. The weeks are the two before
//! this one but one (so both are past their end plus grace whenever this runs), played
//! with the service's clock set into them.

use leaderboard_rules::page::Paging;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use anyhow::Result;
use futures::StreamExt;
use leaderboard_core::memory::MemoryEvents;
use leaderboard_core::service::ServiceError;
use leaderboard_core::service::moderation::{ban, erase};
use leaderboard_core::service::operator::{Operator, Reason, ReasonBody};
use leaderboard_core::service::seal::{self, SealSettings};
use leaderboard_core::service::tournaments::{self, DryRunBody};
use leaderboard_core::store::{HistoryQuery, LeagueRow, SealStore, TournamentStore};
use leaderboard_rules::time::now_ms;
use leaderboard_rules::tournament::Tournament;
use leaderboard_rules::window::Period;
use serde_json::{Value, json};

use crate::support::{
    Crash, CrashProxy, Stack, StackOptions, TestEnv, drain, dynamodb_url, player, redis_url,
    result, subscribe, unique,
};

const WEEK_MS: i64 = 7 * 86_400_000;
const TIERS: [&str; 3] = ["bronze", "silver", "gold"];

/// The league's zones and rewards, as the definition and the model both read them.
#[derive(Clone)]
struct Rules {
    /// Bronze promotes this percent; silver promotes this count.
    bronze_up_percent: u64,
    silver_up: u64,
    /// Silver demotes this percent; gold demotes this count.
    silver_down_percent: u64,
    gold_down: u64,
}

impl Rules {
    fn league(&self) -> Value {
        json!({
            "start_tier": "silver",
            "absent": "DEMOTE",
            "tiers": [
                {"id": "bronze", "promote": {"percent": self.bronze_up_percent},
                 "rewards": [{"from_rank": 1, "to_rank": 3, "reward": "bronze-chest"}]},
                {"id": "silver", "promote": {"count": self.silver_up},
                 "demote": {"percent": self.silver_down_percent},
                 "rewards": [{"from_rank": 1, "to_rank": 1, "reward": "silver-crown"},
                             {"from_rank": 2, "to_rank": 5, "reward": "silver-chest"}]},
                {"id": "gold", "demote": {"count": self.gold_down},
                 "rewards": [{"from_rank": 1, "to_rank": 1, "reward": "gold-crown"},
                             {"from_rank": 2, "to_rank": 10, "reward": "gold-chest"}]},
            ],
        })
    }

    fn reward(tier: usize, rank: u64) -> Option<&'static str> {
        match (tier, rank) {
            (0, 1..=3) => Some("bronze-chest"),
            (1, 1) => Some("silver-crown"),
            (1, 2..=5) => Some("silver-chest"),
            (2, 1) => Some("gold-crown"),
            (2, 2..=10) => Some("gold-chest"),
            _ => None,
        }
    }

    /// One cohort of `tier`: members ranked (in final order) and without a result (in
    /// seat order) -> each member's (rank, tier after, reward).
    fn settle(
        &self,
        tier: usize,
        ranked: &[String],
        absent: &[String],
    ) -> BTreeMap<String, Outcome> {
        let members = (ranked.len() + absent.len()) as u64;
        let up = match tier {
            0 => members * self.bronze_up_percent / 100,
            1 => self.silver_up.min(members),
            _ => 0,
        }
        .min(ranked.len() as u64);
        let down = match tier {
            1 => members * self.silver_down_percent / 100,
            2 => self.gold_down.min(members),
            _ => 0,
        }
        .min(members - up);
        let mut out = BTreeMap::new();
        for (i, p) in ranked.iter().chain(absent).enumerate() {
            let i = i as u64;
            let rank = (i < ranked.len() as u64).then_some(i + 1);
            let after = if i < up {
                tier + 1
            } else if i >= members - down || rank.is_none() {
                // The demotion zone, and (absent: DEMOTE) every member without a result.
                tier.saturating_sub(1)
            } else {
                tier
            };
            let reward = rank.and_then(|r| Self::reward(tier, r)).map(str::to_owned);
            out.insert(p.clone(), (rank, after, reward));
        }
        out
    }
}

/// A member's rank (none without a result), tier after and reward.
type Outcome = (Option<u64>, usize, Option<String>);

fn rules() -> Rules {
    Rules {
        bronze_up_percent: 20,
        silver_up: 5,
        silver_down_percent: 10,
        gold_down: 4,
    }
}

/// The start of the week `weeks_back` weeks before this one (Monday 00:00 UTC).
fn week_start(weeks_back: i64) -> i64 {
    // 1970-01-01 was a Thursday: Mondays are 4 days past a multiple of a week.
    let monday = 4 * 86_400_000;
    let this = (now_ms() - monday).div_euclid(WEEK_MS) * WEEK_MS + monday;
    this - weeks_back * WEEK_MS
}

/// One week as played: each player's cohort and seat, and the results the seal must rank.
#[derive(Default)]
struct Week {
    key: String,
    /// cohort -> (seat, player) of its members.
    cohorts: BTreeMap<u64, Vec<(u64, String)>>,
    /// player -> (score, reached_at).
    results: HashMap<String, (i64, i64)>,
}

impl Week {
    /// Every member's expected outcome, from the model.
    fn expected(
        &self,
        rules: &Rules,
        tier_of: &HashMap<String, usize>,
    ) -> BTreeMap<String, Outcome> {
        let mut all = BTreeMap::new();
        for members in self.cohorts.values() {
            let tier = tier_of[&members[0].1];
            let mut ranked: Vec<&String> = (members.iter().map(|(_, p)| p))
                .filter(|p| self.results.contains_key(*p))
                .collect();
            // The board's order: score, then who reached it first, then player id.
            ranked.sort_by_key(|p| {
                let (score, at) = self.results[*p];
                (std::cmp::Reverse(score), at, (*p).clone())
            });
            let mut seated = members.clone();
            seated.sort();
            let absent: Vec<String> = (seated.into_iter().map(|(_, p)| p))
                .filter(|p| !self.results.contains_key(p))
                .collect();
            let ranked: Vec<String> = ranked.into_iter().cloned().collect();
            all.extend(rules.settle(tier, &ranked, &absent));
        }
        all
    }
}

/// Plays one week: `players` join (in a shuffled order), then post one result each in
/// another order, with few distinct scores so that ties sit on the zones' edges; those
/// `absent` says post nothing.
async fn play(
    env: &TestEnv,
    t: &Tournament,
    start: i64,
    players: &[String],
    absent: impl Fn(usize) -> bool,
    week_no: i64,
) -> Result<Week> {
    env.ctx.clock.set(Some(start + 3_600_000));
    let mut order: Vec<usize> = (0..players.len()).collect();
    order.sort_by_key(|i| (i * 37 + week_no as usize * 11) % players.len());
    let joins = futures::stream::iter(order.iter().map(|&i| {
        let p = player(&players[i]);
        async move { tournaments::join(&env.ctx, &t.tournament_id, &p).await }
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await;
    let mut week = Week::default();
    for joined in joins {
        let (reply, _) = joined?;
        week.key = reply.occurrence.clone();
        let cohort = reply.cohort.expect("a league has cohorts");
        (week.cohorts.entry(cohort).or_default()).push((reply.seat, reply.player_id.to_string()));
    }
    let mut posting: Vec<usize> = (0..players.len()).filter(|i| !absent(*i)).collect();
    posting.sort_by_key(|i| (i * 53 + week_no as usize * 7) % players.len());
    for (k, i) in posting.into_iter().enumerate() {
        // Results a second apart: equal scores are ordered by who reached them first.
        let at = start + 7_200_000 + k as i64 * 1_000;
        env.ctx.clock.set(Some(at));
        let score = ((i as i64 * 7 + week_no * 3) % 6) * 100;
        let p = player(&players[i]);
        tournaments::submit(
            &env.ctx,
            &t.tournament_id,
            &p,
            result("m1", score),
            &crate::support::operator(),
        )
        .await?;
        week.results.insert(players[i].clone(), (score, at));
    }
    env.ctx.clock.set(None);
    Ok(week)
}

/// Seals the boards of occurrence `key` (every due board: `None`) until each is sealed,
/// as the scheduled sweeps would (week B's boards exist, and are past too, while week A
/// is sealed); a run cut off by a failure is picked up by the next once its lease has
/// run out (set to now here, as the minute passing would). How many runs failed.
async fn seal_all(env: &TestEnv, events: &MemoryEvents, key: Option<&str>) -> Result<u32> {
    let settings = SealSettings {
        settle: Duration::ZERO,
    };
    let mut failures = 0;
    for _ in 0..10 {
        let deadline = Instant::now() + Duration::from_secs(60);
        let run = match key {
            None => seal::sweep(&env.ctx.store, events, settings, deadline).await,
            Some(key) => seal_occurrence(env, events, key, settings, deadline).await,
        };
        match run {
            Ok(report) if report.done && report.boards.is_empty() => return Ok(failures),
            Ok(_) => {}
            Err(e) => {
                failures += 1;
                println!("a seal run failed: {e}");
                expire_leases(env).await?;
            }
        }
    }
    anyhow::bail!("the seal did not finish in 10 runs")
}

/// Seals each unsealed board of the occurrence `key`, one on-demand seal at a time.
async fn seal_occurrence(
    env: &TestEnv,
    events: &MemoryEvents,
    key: &str,
    settings: SealSettings,
    deadline: Instant,
) -> Result<seal::SealReport, ServiceError> {
    let page = leaderboard_core::store::BoardStore::list_boards(
        &env.ctx.store,
        "",
        Paging::new(None, 1_000),
    )
    .await?;
    let mut boards = Vec::new();
    for board in page.boards {
        let lb = &board.leaderboard_id;
        let of_week = (board.window.as_ref()).is_some_and(|w| w.window.key.as_deref() == Some(key));
        if of_week && board.sealed_at.is_none() {
            let report = seal::seal(&env.ctx.store, events, settings, lb, deadline).await?;
            boards.extend(report.boards);
        }
    }
    Ok(seal::SealReport { boards, done: true })
}

/// The leases of unfinished seals, run out.
async fn expire_leases(env: &TestEnv) -> Result<()> {
    let page = leaderboard_core::store::BoardStore::list_boards(
        &env.ctx.store,
        "",
        Paging::new(None, 1_000),
    )
    .await?;
    for board in page.boards {
        let lb = &board.leaderboard_id;
        if let Some(mut state) = env.ctx.store.get_seal(lb).await?
            && !state.published
        {
            state.lease_until = 0;
            env.ctx.store.save_seal(lb, &state).await?;
        }
    }
    Ok(())
}

fn operator() -> (Reason, Operator) {
    let reason = Reason::parse(ReasonBody {
        reason: Some(json!("league test")),
    })
    .unwrap();
    (reason, Operator("arn:aws:iam::1:user/ops".into()))
}

#[tokio::test]
async fn two_weeks_of_a_three_tier_league_settle_as_the_model_says_and_a_cut_off_seal_replays_once()
-> Result<()> {
    let env = TestEnv::new().await;
    // The same table and keys reached through a proxy that can cut a call: only the
    // seal that is cut off goes this way (a hop through Python for every call of the
    // test was most of its time).
    let proxy = CrashProxy::start().await?;
    let cut = TestEnv::attach(
        &redis_url(),
        &proxy.url(),
        env.ctx.store.table(),
        &env.prefix,
    )
    .await;
    let rules = rules();
    let id = unique("league");
    let game = unique("g");
    let def: Tournament = serde_json::from_value(json!({
        "tournament_id": id, "game": game, "mode": "race", "title": "Weekly league",
        "schedule": {"period": "WEEKLY"}, "cohort_size": 16, "league": rules.league(),
        // The model deals each tier's joins over 4 cohorts at once.
        "cohort_seating": "SPREAD",
    }))?;
    let op = Operator("test".into());
    tournaments::create(&env.ctx, &op, def).await?;
    let t = env.ctx.tournaments.get(&env.ctx.store, &id).await?;
    let players: Vec<String> = (0..160).map(|i| format!("p{i:03}")).collect();
    let mut tier_of: HashMap<String, usize> = players.iter().map(|p| (p.clone(), 1)).collect();

    // Week A: everyone starts in silver; one in 17 posts nothing.
    let a = play(&env, &t, week_start(3), &players, |i| i % 17 == 3, 1).await?;
    // 160 seats dealt round 4 open cohorts: 8 full, and the last block's 32 seats
    // over 4 cohorts of 8.
    let sizes: Vec<usize> = a.cohorts.values().map(Vec::len).collect();
    assert_eq!(sizes, [[16; 8].as_slice(), &[8; 4]].concat());
    let expected_a = a.expected(&rules, &tier_of);

    // Before week A is settled, its players cannot join week B; a newcomer can.
    env.ctx.clock.set(Some(week_start(2) + 3_600_000));
    let refused = tournaments::join(&env.ctx, &id, &player("p000")).await;
    assert!(
        matches!(
            refused,
            Err(ServiceError::JoinRefused {
                refusal: leaderboard_core::service::JoinRefusal::Settling,
                ..
            })
        ),
        "{refused:?}"
    );
    let newcomers: Vec<String> = (0..10).map(|i| format!("new{i}")).collect();
    for p in &newcomers {
        let (reply, _) = tournaments::join(&env.ctx, &id, &player(p)).await?;
        assert_eq!(
            reply.tier.as_deref(),
            Some("silver"),
            "{p} starts in silver"
        );
        tier_of.insert(p.clone(), 1);
    }
    env.ctx.clock.set(None);

    // Week A's seal is cut off partway through its standings (the 41st write), then
    // run again.
    let events = MemoryEvents::default();
    proxy.arm("PutItem", "TL#", 40, Crash::Before).await?;
    let failures = seal_all(&cut, &events, Some(&a.key)).await?;
    assert_eq!(proxy.fired().await?.0, 1, "the cut fired");
    assert_eq!(failures, 1, "one run was cut off");
    check_settled(&env, &t, &a, &expected_a, &tier_of, &events, 1).await?;
    for (p, (_, after, _)) in &expected_a {
        tier_of.insert(p.clone(), *after);
    }
    let moved = |to: usize| expected_a.values().filter(|o| o.1 == to).count();
    println!(
        "week A: {} promoted to gold, {} demoted to bronze",
        moved(2),
        moved(0)
    );
    assert_eq!(moved(2), 60, "5 a cohort promote");
    assert!(
        moved(0) >= 10,
        "10% of each cohort demote (1 of 16, none of 8), and the absent (10)"
    );

    // Week B: the stored tiers form the cohorts (gold, silver and bronze apart); the
    // newcomers joined silver already. A player banned before the seal gets nothing.
    let b_start = week_start(2);
    let mut b = play(&env, &t, b_start, &players, |i| i % 23 == 5, 2).await?;
    for p in &newcomers {
        // They joined before; posting now adds their results.
        let at = b_start + 9_000_000;
        env.ctx.clock.set(Some(at));
        tournaments::submit(
            &env.ctx,
            &id,
            &player(p),
            result("m1", 250),
            &crate::support::operator(),
        )
        .await?;
        env.ctx.clock.set(None);
        b.results.insert(p.clone(), (250, at));
    }
    let occ_lb = leaderboard_rules::ids::LeaderboardId::parse(&format!("t:{id}:{}", b.key))?;
    for p in &newcomers {
        let m = env
            .ctx
            .store
            .get_member(
                &occ_lb,
                &player(p),
                leaderboard_core::store::Consistency::Strong,
            )
            .await?;
        let m = m.expect("a newcomer's membership");
        (b.cohorts.entry(m.cohort.unwrap()).or_default()).push((m.seat, p.clone()));
    }
    for members in b.cohorts.values() {
        let tiers: BTreeSet<usize> = members.iter().map(|(_, p)| tier_of[p]).collect();
        assert_eq!(tiers.len(), 1, "a cohort holds one tier: {members:?}");
        assert!(members.len() <= 16);
    }
    // The best result of the first gold cohort, banned before the seal.
    let banned = {
        let gold = (b.cohorts.values())
            .find(|m| tier_of[&m[0].1] == 2)
            .expect("a gold cohort");
        (gold.iter().map(|(_, p)| p))
            .filter(|p| b.results.contains_key(*p))
            .max_by_key(|p| (b.results[*p].0, std::cmp::Reverse(b.results[*p].1)))
            .unwrap()
            .clone()
    };
    let (reason, ops) = operator();
    let later = Instant::now() + Duration::from_secs(60);
    ban::ban(&env.ctx, &game, &player(&banned), reason, &ops, None, later).await?;
    b.results.remove(&banned);
    let expected_b = b.expected(&rules, &tier_of);
    assert_eq!(expected_b[&banned].0, None, "the banned player has no rank");
    assert_eq!(expected_b[&banned].2, None, "and no reward");
    assert_eq!(expected_b[&banned].1, 1, "absent: DEMOTE, gold to silver");

    seal_all(&env, &events, None).await?;
    check_settled(&env, &t, &b, &expected_b, &tier_of, &events, 2).await?;
    println!(
        "week B: {} cohorts (tiers {:?})",
        b.cohorts.len(),
        (b.cohorts.values())
            .map(|m| TIERS[tier_of[&m[0].1]])
            .collect::<Vec<_>>()
    );

    // Sealing again publishes nothing more.
    let before = events.settled().len();
    seal_all(&env, &events, None).await?;
    assert_eq!(events.settled().len(), before);

    // The dry run: the same league decides nothing differently; a changed one what the
    // model says, and nothing is stored.
    let dry = |rules: &Rules| {
        let body: DryRunBody =
            serde_json::from_value(json!({"league": rules.league()})).expect("a dry run");
        tournaments::dry_run(&env.ctx, &id, &b.key, body)
    };
    let same = dry(&rules).await?;
    assert_eq!(same.cohorts.len(), b.cohorts.len());
    assert!(
        same.cohorts.iter().all(|c| c.differs.is_empty()),
        "{same:?}"
    );
    let harsher = Rules {
        gold_down: 8,
        silver_up: 2,
        ..rules.clone()
    };
    let tried = dry(&harsher).await?;
    let want_b = b.expected(&harsher, &tier_of);
    let mut differs = BTreeSet::new();
    for c in &tried.cohorts {
        for m in &c.members {
            let p = m.player_id.as_ref().unwrap().to_string();
            let (rank, after, reward) = &want_b[&p];
            assert_eq!(
                (m.rank, m.tier_after.as_str(), m.reward.as_ref()),
                (*rank, TIERS[*after], reward.as_ref()),
                "{p} under the harsher rules"
            );
        }
        differs.extend(c.differs.iter().map(ToString::to_string));
    }
    let want_differs: BTreeSet<String> = (want_b.iter())
        .filter(|(p, o)| expected_b[*p] != **o)
        .map(|(p, _)| p.clone())
        .collect();
    assert_eq!(differs, want_differs);
    assert!(!differs.is_empty());
    check_standings(&env, &t, &expected_b, 2).await?;

    // A player erased after the seal is unnamed in the stored outcome; their standing
    // goes.
    let gone = players[1].clone();
    let (reason, ops) = operator();
    // Its own minute: the deadline above is long past on a slow machine.
    let later = Instant::now() + Duration::from_secs(60);
    let erased = erase::erase(&env.ctx, &player(&gone), reason, &ops, None, later).await?;
    assert!(erased.sweep.complete);
    let standing = tournaments::standing(&env.ctx, &id, &player(&gone)).await?;
    assert_eq!(
        (standing.tier.as_str(), standing.changes.len()),
        ("silver", 0)
    );
    let cohort = (b.cohorts.iter())
        .find(|(_, m)| m.iter().any(|(_, p)| *p == gone))
        .map(|(c, _)| *c)
        .unwrap();
    let results = (env.ctx.store)
        .get_results(&t.cohort_board_id(&occurrence(&t, &b.key, b_start), cohort))
        .await?
        .unwrap();
    let outcome = results.league.unwrap();
    assert_eq!(outcome.len(), b.cohorts[&cohort].len(), "the places stay");
    assert!(outcome.iter().all(|s| s.player_id != Some(player(&gone))));
    assert_eq!(outcome.iter().filter(|s| s.player_id.is_none()).count(), 1);
    Ok(())
}

fn occurrence(t: &Tournament, key: &str, start: i64) -> leaderboard_rules::tournament::Occurrence {
    let occ = t.schedule.occurrence_at(start + 1).unwrap();
    assert_eq!(occ.key, key);
    occ
}

/// Every member's standing, the week's events (one per cohort, every member's outcome)
/// and the ranked members' history rows hold the model's outcome.
async fn check_settled(
    env: &TestEnv,
    t: &Tournament,
    week: &Week,
    expected: &BTreeMap<String, Outcome>,
    tier_of: &HashMap<String, usize>,
    events: &MemoryEvents,
    weeks: usize,
) -> Result<()> {
    let mine: Vec<_> = (events.settled().into_iter())
        .filter(|e| e.occurrence == week.key)
        .collect();
    let cohorts: BTreeSet<u64> = mine.iter().map(|e| e.cohort).collect();
    assert_eq!(mine.len(), week.cohorts.len(), "one event per cohort");
    assert_eq!(cohorts.len(), week.cohorts.len());
    for e in &mine {
        let members = &week.cohorts[&e.cohort];
        assert_eq!(e.members.len(), members.len(), "cohort {}", e.cohort);
        assert_eq!(e.tier, TIERS[tier_of[&members[0].1]]);
        for m in &e.members {
            let p = m.player_id.as_ref().unwrap().to_string();
            let (rank, after, reward) = &expected[&p];
            assert_eq!(
                (m.rank, m.tier_before.as_str(), m.tier_after.as_str()),
                (*rank, TIERS[tier_of[&p]], TIERS[*after]),
                "{p} in cohort {}",
                e.cohort
            );
            assert_eq!(m.reward.as_ref(), reward.as_ref(), "{p}'s reward");
        }
    }
    check_standings(env, t, expected, weeks).await?;
    // History rows carry the outcome (a sample: the first cohort's ranked members).
    let (cohort, members) = week.cohorts.iter().next().unwrap();
    let scope = format!("t:{}:c{cohort}", t.tournament_id);
    for (_, p) in members.iter().filter(|(_, p)| week.results.contains_key(p)) {
        let who = player(p);
        let rows = (env.ctx.store)
            .history(&HistoryQuery {
                player: &who,
                game: &t.game,
                mode: &t.mode,
                scope: &scope,
                period: Period::Weekly,
                end_at_most: None,
                limit: 10,
            })
            .await?;
        let row = (rows.iter().find(|r| r.window.window == week.key))
            .unwrap_or_else(|| panic!("{p}'s row of {}", week.key));
        let (rank, after, reward) = &expected[p];
        assert_eq!(Some(row.rank), *rank, "{p}'s history rank");
        assert_eq!(
            row.league,
            Some(LeagueRow {
                tier_before: TIERS[tier_of[p]].to_owned(),
                tier_after: TIERS[*after].to_owned(),
                reward: reward.clone(),
            }),
            "{p}'s history row"
        );
    }
    Ok(())
}

/// Each player's stored standing: the model's tier, `weeks` changes at most, the last
/// one this week's.
async fn check_standings(
    env: &TestEnv,
    t: &Tournament,
    expected: &BTreeMap<String, Outcome>,
    weeks: usize,
) -> Result<()> {
    let checks = futures::stream::iter(expected.iter().map(|(p, want)| async move {
        let got = tournaments::standing(&env.ctx, &t.tournament_id, &player(p)).await?;
        Ok::<_, ServiceError>((p, want, got))
    }))
    .buffer_unordered(16)
    .collect::<Vec<_>>()
    .await;
    for check in checks {
        let (p, (rank, after, reward), got) = check?;
        assert_eq!(got.tier, TIERS[*after], "{p}'s tier");
        assert!(
            !got.changes.is_empty() && got.changes.len() <= weeks,
            "{p}: {got:?}"
        );
        let last = &got.changes[0];
        assert_eq!(
            (last.rank, last.tier_after.as_str(), last.reward.as_ref()),
            (*rank, TIERS[*after], reward.as_ref()),
            "{p}'s last change"
        );
    }
    Ok(())
}

/// Over the local stack: a league defined and refused by the routes, last week played
/// (through the service, its clock set into it, on the stack's table), sealed by the
/// stack's seal function with its role (`POST /admin/seal`), one `leaderboard.league.settled` per cohort
/// reaching a rule's queue on the stack's bus, the standing and the dry run read over
/// HTTP, and this week's join in the tier the seal decided.
#[tokio::test]
async fn over_the_stack_the_seal_function_settles_a_league_and_publishes_on_its_bus() -> Result<()>
{
    let stack = Stack::launch(
        &redis_url(),
        // No scheduled seal (it would seal last week's cohorts while they are played);
        // the test asks for it once they are.
        StackOptions {
            env: &[("SEAL_SETTLE_SECONDS", "1")],
            ..Default::default()
        },
    )
    .await?;
    let (sqs, queue) = subscribe(&stack, "leaderboard.league.settled").await?;
    let id = unique("lg");
    let def = json!({
        "tournament_id": id, "game": unique("g"), "mode": "race", "title": "League",
        "schedule": {"period": "WEEKLY"}, "cohort_size": 4, "grace_seconds": 0,
        "cohort_seating": "SPREAD",
        "league": {"tiers": [
            {"id": "bronze", "promote": {"count": 1},
             "rewards": [{"from_rank": 1, "to_rank": 1, "reward": "chest"}]},
            {"id": "silver", "demote": {"count": 1}}]},
    });
    // Impossible leagues: 400 naming the field, nothing stored.
    let no_cohorts = |d: &mut Value| {
        d.as_object_mut().unwrap().remove("cohort_size");
    };
    let no_tiers = |d: &mut Value| d["league"]["tiers"] = json!([]);
    let lowest_demotes = |d: &mut Value| d["league"]["tiers"][0]["demote"] = json!({"count": 1});
    let no_such_start = |d: &mut Value| d["league"]["start_tier"] = json!("gold");
    type Change<'a> = &'a dyn Fn(&mut Value);
    let cases: [(Change, &str); 4] = [
        (&no_cohorts, "league"),
        (&no_tiers, "league.tiers"),
        (&lowest_demotes, "league.tiers[0].demote"),
        (&no_such_start, "league.start_tier"),
    ];
    for (change, field) in cases {
        let mut bad = def.clone();
        bad["tournament_id"] = json!(unique("bad"));
        change(&mut bad);
        let (status, body) = stack.post("/tournaments", bad).await?;
        assert_eq!(status, 400, "{field}: {body}");
        assert_eq!(body["error"]["field"], field, "{body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(field), "{field}: {message}");
    }
    let (status, body) = stack.post("/tournaments", def.clone()).await?;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["league"]["tiers"][1]["id"], "silver");

    // Last week: 6 players in 4 cohorts (2, 2, 1, 1); p5 posts nothing.
    let env = stack.inspect(&redis_url(), &dynamodb_url()).await;
    let last_week = week_start(1);
    env.ctx.clock.set(Some(last_week + 3_600_000));
    let mut cohort_of = BTreeMap::new();
    for i in 0..6 {
        let p = player(&format!("p{i}"));
        let (reply, _) = tournaments::join(&env.ctx, &id, &p).await?;
        cohort_of.insert(format!("p{i}"), reply.cohort.unwrap());
    }
    for i in 0..5 {
        let p = player(&format!("p{i}"));
        tournaments::submit(
            &env.ctx,
            &id,
            &p,
            result("m1", 10 * i),
            &crate::support::operator(),
        )
        .await?;
    }
    env.ctx.clock.set(None);
    let key = t_week_key(&env, &id, last_week).await?;

    // The seal function, asked as the schedule asks it, settles every cohort; one event
    // each on the bus.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    stack.seal_all().await?;
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while events.len() < 4 {
        assert!(
            Instant::now() < deadline,
            "4 league.settled events: {events:#?}"
        );
        events.extend(drain(&sqs, &queue).await?);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    events.extend(drain(&sqs, &queue).await?);
    let cohorts: BTreeSet<u64> = (events.iter())
        .map(|e| e["detail"]["cohort"].as_u64().unwrap())
        .collect();
    assert_eq!(events.len(), 4, "one event per cohort: {events:#?}");
    println!("league.settled: {}", events[0]["detail"]);
    assert_eq!(cohorts.len(), 4);
    for e in &events {
        assert_eq!(e["detail-type"], "leaderboard.league.settled");
        assert_eq!(e["detail"]["occurrence"], key.as_str());
        assert_eq!(e["detail"]["tier"], "bronze");
        let members = e["detail"]["members"].as_array().unwrap();
        let first = &members[0];
        if first["rank"] == 1 {
            // The cohort's best promotes with the chest.
            assert_eq!(
                (&first["tier_after"], &first["reward"]),
                (&json!("silver"), &json!("chest"))
            );
        } else {
            // p5 alone, without a result: stays in bronze (the lowest), no reward.
            assert_eq!(first["player_id"], "p5");
            assert_eq!(
                (&first["tier_after"], first.get("reward")),
                (&json!("bronze"), None)
            );
        }
    }

    // The standing over HTTP (a player's route), newest change first.
    let best_of_first = (0..5)
        .filter(|i| cohort_of[&format!("p{i}")] == 0)
        .max()
        .unwrap();
    let who = format!("p{best_of_first}");
    let (status, _, standing) = stack
        .get_as(&format!("/tournaments/{id}/players/{who}/league"), &who)
        .await?;
    assert_eq!(status, 200, "{standing}");
    println!("standing: {standing}");
    assert_eq!(standing["tier"], "silver");
    assert_eq!(standing["changes"][0]["occurrence"], key.as_str());
    assert_eq!(standing["changes"][0]["rank"], 1);
    assert_eq!(standing["changes"][0]["reward"], "chest");
    // The history row of the cohort carries the outcome.
    let history = format!(
        "/games/{}/modes/race/players/{who}/history?period=WEEKLY&scope=t:{id}:c0",
        def["game"].as_str().unwrap()
    );
    let (status, _, rows) = stack.get_as(&history, &who).await?;
    assert_eq!(status, 200, "{rows}");
    assert_eq!(
        rows["windows"][0]["league"],
        json!({"tier_before": "bronze", "tier_after": "silver", "reward": "chest"}),
        "{rows}"
    );
    let (_, _, fresh) = stack
        .get_as(
            &format!("/tournaments/{id}/players/nobody/league"),
            "nobody",
        )
        .await?;
    assert_eq!(
        (&fresh["tier"], &fresh["changes"]),
        (&json!("bronze"), &json!([]))
    );

    // The dry run (server-only): the same league changes nothing; promoting two does.
    let dry = format!("/tournaments/{id}/occurrences/{key}/league/dry-run");
    let (status, same) = stack.post(&dry, json!({"league": def["league"]})).await?;
    assert_eq!(status, 200, "{same}");
    assert_eq!(same["cohorts"].as_array().unwrap().len(), 4);
    assert!(
        same["cohorts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["differs"] == json!([]))
    );
    let mut two = def["league"].clone();
    two["tiers"][0]["promote"]["count"] = json!(2);
    let (status, tried) = stack.post(&dry, json!({"league": two})).await?;
    assert_eq!(status, 200, "{tried}");
    println!("dry run: {tried}");
    let differs: Vec<&Value> = (tried["cohorts"].as_array().unwrap().iter())
        .flat_map(|c| c["differs"].as_array().unwrap())
        .collect();
    // Only p0 is second with a result in its cohort (p5, second in another, has none).
    assert_eq!(differs, [&json!("p0")], "{tried}");
    let (_, still) = stack
        .get(&format!("/tournaments/{id}/players/{who}/league"))
        .await?;
    assert_eq!(
        still["changes"].as_array().unwrap().len(),
        1,
        "a dry run stores nothing"
    );
    for (path, body, status, code) in [
        (
            dry.clone(),
            json!({"league": {"tiers": []}}),
            400,
            "invalid_request",
        ),
        (dry.clone(), json!({"leagues": two}), 400, "invalid_request"),
        (
            format!("/tournaments/{id}/occurrences/2001-W01/league/dry-run"),
            json!({"league": def["league"]}),
            404,
            "board_not_found",
        ),
    ] {
        let (got, reply) = stack.post(&path, body).await?;
        assert_eq!(
            (got, reply["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}: {reply}"
        );
    }

    // This week the promoted player joins silver, the others bronze.
    let (status, joined) = stack
        .post_as(&format!("/tournaments/{id}/join"), &who, json!({}))
        .await?;
    assert_eq!(status, 200, "{joined}");
    println!("join: {joined}");
    assert_eq!(joined["tier"], "silver");
    let (_, other) = stack
        .post_as(&format!("/tournaments/{id}/join"), "p5", json!({}))
        .await?;
    assert_eq!(other["tier"], "bronze");
    Ok(())
}

/// The key of the week starting at `start`, as the tournament names it.
async fn t_week_key(env: &TestEnv, id: &str, start: i64) -> Result<String> {
    let t = env.ctx.tournaments.get(&env.ctx.store, id).await?;
    Ok(t.schedule.occurrence_at(start + 1).unwrap().key)
}
