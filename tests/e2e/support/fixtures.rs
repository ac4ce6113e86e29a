//! Test data: unique names, ids, a deterministic generator, fixed friends, settings,
//! reply helpers and polling.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use leaderboard_core::service::Settings;
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::score::Score;

/// A name no other test (or test run) uses; valid as a table name, id and key prefix.
pub fn unique(tag: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{tag}-{}-{nanos}-{n}", std::process::id())
}

pub fn lb(raw: &str) -> LeaderboardId {
    LeaderboardId::parse(raw).expect("test board id")
}

pub fn player(raw: &str) -> PlayerId {
    PlayerId::parse(raw).expect("test player id")
}

/// A whole-number score as a submission carries it.
pub fn amount(v: i64) -> leaderboard_rules::decimal::Amount {
    leaderboard_rules::decimal::Amount::whole("new_score", score(v))
}

pub fn score(v: i64) -> Score {
    Score::new("score", v).expect("test score")
}

/// A small deterministic generator for shuffles and picks.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i as u64 + 1) as usize);
        }
    }
}

/// A friends source with a fixed list (the HTTP social graph has its own tests).
pub struct FixedFriends(pub Vec<PlayerId>);

impl leaderboard_core::store::FriendsSource for FixedFriends {
    async fn friends_of(
        &self,
        _: &PlayerId,
    ) -> Result<Vec<PlayerId>, leaderboard_core::store::FriendsError> {
        Ok(self.0.clone())
    }
}

/// Settings for tests that look at the index and its fallbacks through the use cases:
/// the reply cache and the top windows' card copies off, so each read shows the
/// backends as they are now. The caches have their own tests (`hot`, `profiles`), and
/// the HTTP stacks run with them on, as deployed.
pub fn uncached() -> Settings {
    Settings {
        read_cache_ttl: Duration::ZERO,
        card_cache_ttl: Duration::ZERO,
        ..Settings::default()
    }
}

/// A descending board's index entry: `p` at score `s`, reached at 1000 + version.
pub fn index_entry(
    board: &LeaderboardId,
    p: &str,
    s: i64,
    version: u64,
) -> leaderboard_core::store::IndexEntry {
    leaderboard_core::store::IndexEntry {
        metadata: None,
        board: board.clone(),
        direction: leaderboard_rules::order::Direction::Desc,
        key: leaderboard_rules::order::RankKey {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            score: score(s),
            reached_at: 1_000 + version as i64,
            player: p.into(),
        },
        version,
        expire_at: None,
        kind: leaderboard_core::store::EntryKind::Standing,
    }
}

/// The player ids of a reply's rows (`entries`, `neighbors`), in order.
pub fn players(v: &serde_json::Value, field: &str) -> Vec<String> {
    v[field]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| r["player_id"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The `rank` of each row of a reply's `field` (0 where a row has none), in order.
pub fn ranks(v: &serde_json::Value, field: &str) -> Vec<u64> {
    v[field]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| r["rank"].as_u64().unwrap_or(0))
                .collect()
        })
        .unwrap_or_default()
}

/// The `(player_id, score)` of each row of `v[field]`, in order.
pub fn scores(v: &serde_json::Value, field: &str) -> Vec<(String, i64)> {
    v[field]
        .as_array()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let player = r["player_id"].as_str().unwrap_or("?").to_owned();
                    (player, r["score"].as_i64().unwrap_or(0))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Polls `probe` until it returns `Some`, or fails after `within`.
pub async fn eventually<T, F, Fut>(within: Duration, what: &str, mut probe: F) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Option<T>>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = probe().await? {
            return Ok(v);
        }
        if start.elapsed() > within {
            bail!("{what}: not reached within {within:?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A match result's body: `s` for match `m`, now.
pub fn result(m: &str, s: i64) -> leaderboard_core::service::write::request::ScoreBody {
    leaderboard_core::service::write::request::ScoreBody {
        op: Default::default(),
        reason: None,
        subscores: None,
        new_score: Some(serde_json::value::to_raw_value(&s).expect("a number")),
        match_id: Some(serde_json::json!(m)),
        event_ts: None,
        metadata: None,
    }
}

/// The operator a test acts as (what the gateway's IAM principal would be).
pub fn operator() -> leaderboard_core::service::operator::Operator {
    leaderboard_core::service::operator::Operator("test-operator".into())
}
