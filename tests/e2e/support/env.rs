//! [`TestEnv`]: one test's own table and key prefix over the production adapters, with
//! the writes tests make through the use cases.

use leaderboard_core::store::BoardStore;
use leaderboard_core::store::IndexWrites;
use std::time::Duration;

use anyhow::Result;
use leaderboard::adapters::dynamodb::{DynamoScoreStore, StandingItem};
use leaderboard::adapters::redis::{Conn, RedisRankIndex};
use leaderboard::wiring::AppContext;
use leaderboard_core::service::boards::{self, CreateFamily, Created, SeasonBody};
use leaderboard_core::service::scores::{self, MatchReply, MatchResult};
use leaderboard_core::service::write::reply::IngestReply;
use leaderboard_core::service::write::request::SubmitScore;
use leaderboard_core::service::{Context, ingest};
use leaderboard_rules::board::{Board, BoardStatus, Policy};
use leaderboard_rules::ids::{LeaderboardId, MatchId};
use leaderboard_rules::window::Period;

use super::*;

/// One test's world: its own table, its own key prefix, the production adapters.
pub struct TestEnv {
    pub ctx: AppContext,
    pub prefix: String,
    pub redis: Conn,
}

impl TestEnv {
    pub async fn new() -> Self {
        Self::on(&redis_url()).await
    }

    /// A new table and key prefix, with the index on the Redis (or cluster) at `redis_url`.
    pub async fn on(redis_url: &str) -> Self {
        Self::reaching(redis_url, &dynamodb_url()).await
    }

    /// As [`Self::on`], with DynamoDB reached at `dynamodb_url` (e.g. through a proxy
    /// that breaks calls).
    pub async fn reaching(redis_url: &str, dynamodb_url: &str) -> Self {
        let env = Self::attach(
            redis_url,
            dynamodb_url,
            &unique("t"),
            &format!("{}:", unique("k")),
        )
        .await;
        env.ctx
            .store
            .create_table()
            .await
            .expect("create the test table");
        env
    }

    /// The adapters over an existing table and key prefix (e.g. a [`Stack`]'s), with a
    /// 2 s Redis budget.
    pub async fn attach(redis_url: &str, dynamodb_url: &str, table: &str, prefix: &str) -> Self {
        let store = DynamoScoreStore::new(dynamodb_client_at(dynamodb_url).await, table);
        let index = super::rank_index(redis_url, prefix, Duration::from_secs(2));
        let redis = raw_redis(redis_url).await;
        Self {
            ctx: Context::new(store, index, uncached()),
            prefix: prefix.to_owned(),
            redis,
        }
    }

    /// A new ACTIVE board with `policy` (and dense ranks).
    pub async fn board(&self, policy: Policy) -> LeaderboardId {
        self.board_with(policy, true).await
    }

    /// A new ACTIVE board with `policy`, keeping dense ranks or not.
    pub async fn board_with(&self, policy: Policy, dense_ranks: bool) -> LeaderboardId {
        let id = lb(&unique("b"));
        let board = Board {
            tournament: None,
            leaderboard_id: id.clone(),
            policy,
            status: BoardStatus::Active,
            created_at: 0,
            window: None,
            sealed_at: None,
            dense_ranks,
            rank_index: true,
            scores: Default::default(),
            integrity: None,
            reset: None,
            rewards: None,
        };
        let existing = self
            .ctx
            .store
            .create_board(&board)
            .await
            .expect("create board");
        assert!(existing.is_none());
        // As the boards function does for a new board: its (empty) index is complete.
        self.ctx
            .index
            .init_board(&id, None, dense_ranks)
            .await
            .expect("mark the index");
        id
    }

    /// A new family (unique game name) with `periods`, regions NA and EU, the given
    /// season and grace; returns its game and mode.
    pub async fn family(
        &self,
        policy: Policy,
        periods: &[Period],
        season: Option<(i64, i64)>,
        grace_seconds: i64,
    ) -> (String, String) {
        self.family_ranking(policy, periods, season, grace_seconds, None)
            .await
    }

    /// [`TestEnv::family`] whose boards keep their rank order in DynamoDB for
    /// `rank_index_periods` only (`None`: the API's default, every period but DAILY).
    pub async fn family_ranking(
        &self,
        policy: Policy,
        periods: &[Period],
        season: Option<(i64, i64)>,
        grace_seconds: i64,
        rank_index_periods: Option<Vec<Period>>,
    ) -> (String, String) {
        let game = unique("g").replace(['-'], "_");
        let game = game[game.len().saturating_sub(30)..].to_owned();
        let mut req = CreateFamily::new(&game, "ranked", policy, &["NA", "EU"], periods);
        req.season = season.map(|(start, end)| SeasonBody {
            id: "s1".into(),
            start: start.into(),
            end: end.into(),
        });
        req.grace_seconds = grace_seconds;
        req.dense_ranks = true;
        req.rank_index_periods = rank_index_periods;
        let created = boards::create_family(&self.ctx.store, req)
            .await
            .expect("create family");
        assert!(matches!(created, Created::New(_)));
        (game, "ranked".into())
    }

    /// This test's table and keys with Redis not answering (nothing listens on the
    /// port): every read is served degraded, from DynamoDB.
    pub async fn redis_away(&self) -> Result<AppContext> {
        let store = DynamoScoreStore::new(
            dynamodb_client_at(&dynamodb_url()).await,
            self.ctx.store.table(),
        );
        let index = RedisRankIndex::new(
            "redis://127.0.0.1:1",
            &self.prefix,
            Duration::from_millis(200),
        )?;
        Ok(Context::new(store, index, uncached()))
    }

    /// One match result through the fan-out.
    pub async fn submit_match(
        &self,
        (game, mode): &(String, String),
        region: &str,
        p: &str,
        match_id: &str,
        value: i64,
        event_ts: Option<i64>,
    ) -> Result<MatchReply, leaderboard_core::service::ServiceError> {
        let m = MatchResult {
            subscores: Vec::new(),
            metadata: None,
            game: game.clone(),
            mode: mode.clone(),
            region: region.into(),
            player: player(p),
            match_id: MatchId::parse(match_id).expect("test match id"),
            score: amount(value),
            event_ts,
        };
        scores::submit_match(&self.ctx, m).await
    }

    pub async fn submit(
        &self,
        board: &LeaderboardId,
        p: &str,
        match_id: &str,
        value: i64,
    ) -> Result<IngestReply, leaderboard_core::service::ServiceError> {
        let m = MatchId::parse(match_id).expect("test match id");
        let req = SubmitScore::plain(board.clone(), player(p), m, amount(value));
        ingest::submit_score(&self.ctx, req).await
    }

    /// `players` standings on `board` (a descending board), written straight into
    /// DynamoDB (their stream records follow as for any write): player `s{i:05}` with a
    /// score spread over 0..100,000.
    pub async fn seed_standings(&self, board: &LeaderboardId, players: u64) -> Result<()> {
        use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
        let items: Vec<WriteRequest> = (0..players)
            .map(|i| {
                let standing = leaderboard_rules::board::Standing {
                    ties: leaderboard_rules::tiebreak::Ties::none(),
                    metadata: None,
                    score: score((i * 7_919 % 100_000) as i64),
                    reached_at: 1_700_000_000_000 + i as i64,
                    version: 1,
                    last_match_id: MatchId::parse("seed").expect("match id"),
                };
                let item = StandingItem::new(
                    board,
                    &player(&format!("s{i:05}")),
                    leaderboard_rules::order::Direction::Desc,
                    &standing,
                    None,
                );
                let put = PutRequest::builder()
                    .set_item(Some(serde_dynamo::to_item(item).expect("item")))
                    .build()
                    .expect("put request");
                WriteRequest::builder().put_request(put).build()
            })
            .collect();
        for chunk in items.chunks(25) {
            self.ctx
                .store
                .client()
                .batch_write_item()
                .request_items(self.ctx.store.table(), chunk.to_vec())
                .send()
                .await?;
        }
        Ok(())
    }
}
