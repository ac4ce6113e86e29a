//! The functions' execution roles in template.yaml, held to least privilege. The local
//! DynamoDB endpoint enforces each function's role as SAM creates it
//! (`infra/local/iam.py`), so here every store call of the production adapter is made
//! with every function's credentials: a function may make exactly the calls it needs
//! (the HTTP tests show those suffice), and every other call is refused by IAM without
//! touching the table.

use leaderboard_core::store::{
    AuditAction, AuditRecord, Ban, BoardStore, ClaimOutcome, ExportJob, ExportStore, HistoryQuery,
    HistoryRow, ModerationStore, Placing, RankedReads, RebuildStore, Removal, Results, Reward,
    RewardStatus, RewardStore, SealState, SealStore, SealedWindow, SketchStore, StandingStore,
};
use leaderboard_rules::page::Paging;
use std::collections::BTreeSet;

use leaderboard::adapters::dynamodb::DynamoScoreStore;
use leaderboard_core::store::StoreError;
use leaderboard_core::store::{Checkpoint, Commit, CommitOutcome, Consistency, MappingStore, Row};
use leaderboard_rules::board::{Board, BoardStatus, Policy, Standing};
use leaderboard_rules::family::Family;
use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::order::{BoardOrder, Direction, RankKey};
use leaderboard_rules::window::Period;

use crate::support::{TestEnv, dynamodb_client_as, dynamodb_url, player};
use leaderboard_rules::reset::BoardReset;

/// Every call of the store adapter, by name, in the order the test makes them (a
/// checkpoint is put before it is deleted): 64 calls.
const CALLS: [&[&str]; 2] = [
    &BOARD_ADMIN,
    &[
        "list_families",
        "set_integrity",
        "set_family_integrity",
        "set_reset",
        "get_standing",
        "get_receipt",
        "commit",
        "commit_correction",
        "roll",
        "expiring",
        "ranked_after",
        "ranked_before",
        "count_before",
        "keys_of",
        "get_metadata",
        "standings_page",
        "get_checkpoint",
        "put_checkpoint",
        "delete_checkpoint",
        "get_sketch",
        "put_sketch",
        "get_row",
        "remove_standing",
        "erase_player",
        "put_ban",
        "get_ban",
        "delete_ban",
        "bans_of",
        "bans_page",
        "append_audit",
        "audit_page",
        "redact_audit",
        "shard_after",
        "get_seal",
        "claim_seal",
        "save_seal",
        "put_history",
        "history",
        "erase_history",
        "put_results",
        "get_results",
        "redact_results",
        "mark_sealed",
        "get_mapping",
        "get_mapping_version",
        "put_mapping",
        "put_export",
        "get_export",
        "list_exports",
        "claim_export",
        "save_export",
        "set_rewards",
        "set_family_rewards",
        "put_rewards",
        "list_rewards",
        "claim_reward",
        "mark_claim_published",
        "erase_rewards",
    ],
];

/// What creating boards and families, listing boards and setting a board's status call
/// (the test makes them first, in this order).
const BOARD_ADMIN: [&str; 6] = [
    "get_board",
    "create_board",
    "set_status",
    "list_boards",
    "get_family",
    "create_family",
];

/// The game the ban calls name.
const ROLE_GAME: &str = "rolegame";

/// What a result's write calls: the board (created from its family on a first result),
/// the row and its receipts, the conditional commit, and the player's ban. PutItems on a
/// standing, which IAM cannot tell from the commit's, allow `remove_standing` and `roll`.
const RESULT_WRITE: [&str; 10] = [
    "get_board",
    "create_board",
    "get_family",
    "get_standing",
    "get_row",
    "get_receipt",
    "commit",
    "remove_standing",
    "roll",
    "get_ban",
];

/// A ban's calls: put, read, lift, a player's bans in every game and a game's bans.
const BANS: [&str; 5] = ["put_ban", "get_ban", "delete_ban", "bans_of", "bans_page"];

/// What a read from DynamoDB calls when Redis cannot answer: the board, the rank-ordered
/// index (its queries, counts and sketches) and the rows' metadata (a BatchGetItem of
/// standings, which IAM cannot tell from `keys_of`'s).
const DEGRADED_READS: [&str; 8] = [
    "get_board",
    "keys_of",
    "get_metadata",
    "ranked_after",
    "ranked_before",
    "count_before",
    "shard_after",
    "get_sketch",
];

/// What a rebuild calls: the boards, their standings page by page, and its checkpoint.
const REBUILD: [&str; 6] = [
    "get_board",
    "list_boards",
    "standings_page",
    "get_checkpoint",
    "put_checkpoint",
    "delete_checkpoint",
];

/// What each function's role allows (the union of its groups of calls); everything else
/// must be refused.
const ROLES: [(&str, &[&[&str]]); 14] = [
    (
        "IngestFunction",
        &[
            &RESULT_WRITE,
            // A result with `op: set` writes its audit record with the row (a PutItem
            // IAM cannot tell from appending any other record).
            &["commit_correction", "append_audit"],
        ],
    ),
    (
        // POST /scores' calls, and the mappings it reads records with.
        "StreamIngestFunction",
        &[&RESULT_WRITE, &["get_mapping"]],
    ),
    (
        "RankFunction",
        &[&DEGRADED_READS, &["get_standing", "get_row"]],
    ),
    ("TopFunction", &[&DEGRADED_READS]),
    (
        "FriendsFunction",
        &[&["get_board", "keys_of", "get_metadata"]],
    ),
    (
        "BoardsFunction",
        &[
            &BOARD_ADMIN,
            &[
                "append_audit",
                "get_results",
                "history",
                // The metadata of a sealed window's standings, a BatchGetItem as keys_of is.
                "get_metadata",
                "keys_of",
                // An UpdateItem on the board and its list entry, as a status change is.
                "mark_sealed",
                // Integrity rules changed: UpdateItems on the board, its list entry and
                // the family.
                "set_integrity",
                "set_family_integrity",
                // An UpdateItem on the board and its list entry, as a status change is.
                "set_reset",
                // A reward table changed: UpdateItems as the integrity rules' are.
                "set_rewards",
                "set_family_rewards",
            ],
        ],
    ),
    (
        "AdminFunction",
        &[&[
            "get_mapping",
            "get_mapping_version",
            "put_mapping",
            // GET /admin/index: the board, a rebuild in progress from its checkpoint.
            "get_board",
            "get_checkpoint",
            "audit_page",
        ]],
    ),
    (
        "ModerationFunction",
        &[
            &[
                "get_board",
                "list_boards",
                "get_standing",
                "get_row",
                // A decision on a held result reads its receipt when the row no longer
                // keeps it (docs/integrity.md).
                "get_receipt",
                "remove_standing",
                // A PutItem on a row, which IAM cannot tell from the removal's (and with an
                // audit record, which it also writes).
                "commit",
                "commit_correction",
                "roll",
                "erase_player",
                "append_audit",
                // A Query of the trail, which IAM cannot tell from the erasure's redaction.
                "audit_page",
                "redact_audit",
                "get_results",
                "redact_results",
                // A PutItem on results, as the redaction is.
                "put_results",
                "history",
                "erase_history",
                // A BatchWriteItem on history, as the erasure's deletes are.
                "put_history",
                // An erasure's rewards: listed (a Query, as a list is) and deleted.
                "list_rewards",
                "erase_rewards",
            ],
            &BANS,
            // The integrity dry run, when the board's index cannot answer, reads it
            // from DynamoDB best first, as a degraded top read does.
            &[
                "ranked_after",
                "ranked_before",
                "count_before",
                "shard_after",
                "get_sketch",
            ],
        ],
    ),
    (
        "RebuildFunction",
        &[
            &REBUILD,
            &[
                "get_sketch",
                "put_sketch",
                // A rolling board's rows, rolled as their results leave the window.
                "get_row",
                "get_standing",
                "expiring",
                "roll",
                // A PutItem on a row, which IAM cannot tell from the roll's.
                "commit",
                "remove_standing",
            ],
        ],
    ),
    ("ProjectorFunction", &[&[]]),
    // It reads the stream (the mapping) and Redis, and publishes to the events API; a
    // watched board's definition says how it writes its scores.
    ("LiveFunction", &[&["get_board"]]),
    (
        "SealFunction",
        &[&[
            "get_board",
            "list_boards",
            // Queries of the rank index, which IAM cannot tell apart from the walk's.
            "ranked_after",
            "ranked_before",
            "count_before",
            "shard_after",
            // A tournament cohort's rows, read whole (it keeps no rank order).
            "standings_page",
            "get_seal",
            "claim_seal",
            "save_seal",
            "put_history",
            "put_results",
            "get_results",
            "redact_results",
            "mark_sealed",
            // UpdateItems on the board and its list entry, as marking it sealed is.
            "set_status",
            "set_integrity",
            "set_rewards",
            // The families whose windows' turns the sweep announces.
            "list_families",
            // Resets: the reset in the board and its list entry, a family's boards, and
            // each standing taken off (a strong read of the row, then a PutItem of its
            // tombstone, which IAM cannot tell from a result's).
            "set_reset",
            "get_family",
            "get_row",
            "get_standing",
            "remove_standing",
            "commit",
            "commit_correction",
            "roll",
            // Exports: their progress, their audit record, and the metadata of the
            // standings walked (a BatchGetItem of standings, as keys_of is).
            "put_export",
            "get_export",
            "list_exports",
            "claim_export",
            "save_export",
            "append_audit",
            "get_metadata",
            "keys_of",
            // A window's rewards, each written once.
            "put_rewards",
        ]],
    ),
    (
        // Profiles (no call here: they are not the board store's) and an operator's
        // reset of one, audited; a player's rewards, listed and claimed.
        "ProfilesFunction",
        &[&[
            "append_audit",
            "list_rewards",
            "claim_reward",
            "mark_claim_published",
        ]],
    ),
    ("RepairFunction", &[&REBUILD]),
];

/// What the calls are made about: one board with one player's standing and receipt,
/// and one family, written with unrestricted credentials.
struct Fixture {
    /// Unrestricted, to set up what a call needs.
    admin: DynamoScoreStore,
    board: Board,
    family: Family,
    player: PlayerId,
    match_id: MatchId,
    standing: Standing,
    row: Row,
    key: RankKey,
}

impl Fixture {
    async fn write(env: &TestEnv) -> Self {
        let store = &env.ctx.store;
        let lb = env.board(Policy::Best).await;
        env.submit(&lb, "ana", "m1", 40).await.expect("a score");
        let (game, mode) = env.family(Policy::Best, &[Period::Daily], None, 0).await;
        let player = player("ana");
        let match_id = MatchId::parse("m1").expect("match id");
        let board = store.get_board(&lb).await.unwrap().expect("board");
        let family = store
            .get_family(&game, &mode)
            .await
            .unwrap()
            .expect("family");
        let standing = store
            .get_standing(&lb, &player)
            .await
            .unwrap()
            .expect("standing");
        let row = store
            .get_row(&lb, &player, Consistency::Strong)
            .await
            .unwrap();
        assert!(
            row.kept_receipt(&match_id).is_some(),
            "the row keeps m1's receipt"
        );
        let key = store
            .ranked_after(BoardOrder::new(&lb, Direction::Desc), None, 1)
            .await
            .unwrap()
            .pop()
            .expect("rank key");
        Self {
            admin: store.clone(),
            board,
            family,
            player,
            match_id,
            standing,
            row,
            key,
        }
    }

    fn lb(&self) -> &LeaderboardId {
        &self.board.leaderboard_id
    }

    /// Makes one call. Writes that are allowed change nothing (they find what exists,
    /// or a condition that no longer holds), except the checkpoint, which is put and
    /// deleted again.
    async fn call(&self, store: &DynamoScoreStore, name: &str) -> Result<(), StoreError> {
        let (lb, dir) = (self.lb(), Direction::Desc);
        match name {
            "get_board" => store.get_board(lb).await.map(drop),
            "create_board" => {
                let existing = store.create_board(&self.board).await?;
                assert!(existing.is_some(), "the board exists already");
                Ok(())
            }
            "set_status" => {
                let moved = store.set_status(lb, BoardStatus::Closed, BoardStatus::Frozen);
                assert!(!moved.await?, "the board is not closed");
                Ok(())
            }
            "list_boards" => store.list_boards("", Paging::new(None, 5)).await.map(drop),
            "set_integrity" => {
                assert!(store.set_integrity(lb, None).await?, "the board exists");
                Ok(())
            }
            // A board's first reset: stored by the first role allowed, refused by its
            // condition for the others.
            "set_reset" => {
                let first = BoardReset::after(None, 0, 1, 0, "roles".into(), "r".into());
                store.set_reset(lb, &first).await.map(drop)
            }
            "set_family_integrity" => {
                let set = store.set_family_integrity(&self.family, None);
                assert!(set.await?, "the family exists");
                Ok(())
            }
            "get_family" => store
                .get_family(&self.family.game, &self.family.mode)
                .await
                .map(drop),
            "create_family" => {
                assert!(store.create_family(&self.family).await?.is_some());
                Ok(())
            }
            "list_families" => store.list_families(Paging::new(None, 5)).await.map(drop),
            "get_standing" => store.get_standing(lb, &self.player).await.map(drop),
            "get_receipt" => store
                .get_receipt(lb, &self.player, &self.match_id)
                .await
                .map(drop),
            "commit" => self.commit_stale(store, lb, dir, None).await,
            "roll" => {
                // A row read before a write that has since happened: refused.
                let stale = Row {
                    rev: self.row.rev.map(|r| r + 100),
                    ..self.row.clone()
                };
                let roll = leaderboard_core::store::Roll {
                    at: self.at(lb, dir, &stale),
                    standing: &self.standing,
                    buckets: leaderboard_core::store::Buckets {
                        buckets: &[],
                        next_expiry: None,
                    },
                    ranked: true,
                };
                assert_eq!(store.roll(&roll).await?, CommitOutcome::StandingChanged);
                Ok(())
            }
            "expiring" => store.expiring(lb, 0, 0, 5).await.map(drop),
            "commit_correction" => {
                let mut audit = AuditRecord {
                    id: format!("{:013}-role", 1),
                    at: 1,
                    actor: "roles".into(),
                    action: AuditAction::SetScore,
                    reason: "a correction".into(),
                    leaderboard_id: Some(lb.clone()),
                    game: None,
                    player_id: Some(self.player.clone()),
                    detail: serde_json::Value::Null,
                };
                audit.detail = serde_json::json!({"score": 1});
                self.commit_stale(store, lb, dir, Some(&audit)).await
            }
            "ranked_after" => store
                .ranked_after(BoardOrder::new(lb, dir), None, 5)
                .await
                .map(drop),
            "ranked_before" => store
                .ranked_before(BoardOrder::new(lb, dir), &self.key, 5)
                .await
                .map(drop),
            "count_before" => store
                .count_before(BoardOrder::new(lb, dir), Some(&self.key), 100)
                .await
                .map(drop),
            "keys_of" => store
                .keys_of(lb, std::slice::from_ref(&self.player))
                .await
                .map(drop),
            "get_metadata" => store
                .get_metadata(&[(lb.clone(), self.player.clone())])
                .await
                .map(drop),
            "standings_page" => store
                .standings_page(lb, 0, Paging::new(None, 5))
                .await
                .map(drop),
            "get_checkpoint" => store.get_checkpoint(lb).await.map(drop),
            "put_checkpoint" => {
                let cp = Checkpoint {
                    gen_id: "roles".into(),
                    shard: 0,
                    after: None,
                    loaded: 0,
                    started_at: 0,
                };
                store.put_checkpoint(lb, &cp).await
            }
            "delete_checkpoint" => store.delete_checkpoint(lb).await,
            "get_sketch" => store.get_sketch(lb).await.map(drop),
            "put_sketch" => {
                let sketch = leaderboard_core::store::RankSketch {
                    at: 0,
                    total: 1,
                    ranks: vec![0],
                    keys: vec![self.key.sort_key(dir)],
                };
                store.put_sketch(lb, &sketch).await
            }
            "get_row" => store
                .get_row(lb, &self.player, Consistency::Eventual)
                .await
                .map(drop),
            "remove_standing" => {
                let outcome = store
                    .remove_standing(&Removal {
                        at: self.at(
                            lb,
                            dir,
                            &Row {
                                rev: self.row.rev.map(|r| r + 100),
                                ..self.row.clone()
                            },
                        ),
                        removed_at: 0,
                    })
                    .await?;
                assert_eq!(outcome, CommitOutcome::StandingChanged);
                Ok(())
            }
            "erase_player" => {
                let nobody = PlayerId::parse("roles-nobody").unwrap();
                assert_eq!(store.erase_player(lb, &nobody).await?, None);
                Ok(())
            }
            "put_ban" => {
                let ban = Ban {
                    game: ROLE_GAME.into(),
                    player_id: PlayerId::parse("roles-nobody").unwrap(),
                    reason: "roles".into(),
                    actor: "roles".into(),
                    at: 0,
                };
                store.put_ban(&ban).await?;
                store.delete_ban(ROLE_GAME, &ban.player_id).await.map(drop)
            }
            "get_ban" => store.get_ban(ROLE_GAME, &self.player).await.map(drop),
            "delete_ban" => store.delete_ban(ROLE_GAME, &self.player).await.map(drop),
            "bans_of" => store.bans_of(&self.player).await.map(drop),
            "bans_page" => (store.bans_page(ROLE_GAME, Paging::new(None, 5)).await).map(drop),
            "append_audit" => store.append_audit(&audit_record(0, None)).await,
            "audit_page" => store.audit_page(Paging::new(None, 5)).await.map(drop),
            "redact_audit" => {
                // A record that names the player, so the redaction has one to rewrite (with
                // none, it is a Query alone, which IAM cannot tell from a page read).
                let named = audit_record(1, Some(self.player.clone()));
                self.admin.append_audit(&named).await?;
                store.redact_audit(&self.player).await.map(drop)
            }
            "shard_after" => store
                .shard_after(BoardOrder::new(lb, dir), 0, None, 5)
                .await
                .map(drop),
            "get_seal" => store.get_seal(lb).await.map(drop),
            "claim_seal" => store.claim_seal(&roles_lb(), "roles", 0, 0).await.map(drop),
            "save_seal" => {
                let state = SealState::begun("roles-not-the-owner", 0);
                assert!(!store.save_seal(lb, &state).await?, "no such lease");
                Ok(())
            }
            "put_history" => store.put_history(&[self.history_row()]).await,
            "history" => {
                let q = HistoryQuery {
                    player: &self.player,
                    game: "g",
                    mode: "m",
                    scope: "GLOBAL",
                    period: Period::Weekly,
                    end_at_most: None,
                    limit: 5,
                };
                store.history(&q).await.map(drop)
            }
            "erase_history" => {
                // A row to delete each time, so that every erasure writes.
                self.admin.put_history(&[self.history_row()]).await?;
                let nobody = PlayerId::parse("roles-nobody").unwrap();
                store.erase_history(&nobody).await.map(drop)
            }
            "put_results" => store.put_results(&self.results()).await,
            "get_results" => store.get_results(lb).await.map(drop),
            "redact_results" => {
                // Named again each time, so that every redaction writes.
                self.admin.put_results(&self.results()).await?;
                let nobody = PlayerId::parse("roles-nobody").unwrap();
                assert!(store.redact_results(&roles_lb(), &nobody).await?);
                Ok(())
            }
            "mark_sealed" => {
                let missing = Board {
                    leaderboard_id: roles_lb(),
                    ..self.board.clone()
                };
                store.mark_sealed(&missing, 1).await
            }
            "get_mapping" => store.get_mapping("roles-src").await.map(drop),
            "get_mapping_version" => store.get_mapping_version("roles-src", 1).await.map(drop),
            // Version 1 once; later calls find it taken (the condition unmet).
            "put_mapping" => store.put_mapping(&roles_mapping()).await.map(drop),
            "put_export" => store.put_export(&roles_export(lb)).await,
            "get_export" => store.get_export(lb, "roles").await.map(drop),
            "list_exports" => store.list_exports(lb, 5).await.map(drop),
            "claim_export" => (store.claim_export(lb, "roles-none", "roles", 0, 0).await).map(drop),
            "save_export" => {
                let job = ExportJob {
                    owner: "roles-not-the-owner".into(),
                    ..roles_export(lb)
                };
                assert!(!store.save_export(&job).await?, "no such lease");
                Ok(())
            }
            "set_rewards" => {
                assert!(store.set_rewards(lb, None).await?, "the board exists");
                Ok(())
            }
            "set_family_rewards" => {
                let set = store.set_family_rewards(&self.family, None);
                assert!(set.await?, "the family exists");
                Ok(())
            }
            // Written by the first role allowed; the others find it there.
            "put_rewards" => store
                .put_rewards(&[self.reward("roles-nobody")])
                .await
                .map(drop),
            "list_rewards" => store.list_rewards(&self.player, 5).await.map(drop),
            "claim_reward" => {
                let none = store.claim_reward(&self.player, "roles-none", "roles", 0);
                assert_eq!(none.await?, ClaimOutcome::Missing);
                Ok(())
            }
            "mark_claim_published" => store.mark_claim_published(&self.player, "roles-none").await,
            "erase_rewards" => {
                // A reward to delete each time, so that every erasure writes.
                self.admin
                    .put_rewards(&[self.reward("roles-erased")])
                    .await?;
                let erased = PlayerId::parse("roles-erased").unwrap();
                store.erase_rewards(&erased).await.map(drop)
            }
            other => unreachable!("no call {other}"),
        }
    }
}

/// An export of `lb` with an id of its own (each put writes a new one).
fn roles_export(lb: &LeaderboardId) -> ExportJob {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    ExportJob {
        id: format!("roles-{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        leaderboard_id: lb.clone(),
        actor: "roles".into(),
        reason: "roles".into(),
        requested_at: 0,
        status: leaderboard_rules::export::ExportStatus::Running,
        object: "exports/roles.csv".into(),
        rows: 0,
        moved: 0,
        bytes: 0,
        after: None,
        upload: None,
        parts: Vec::new(),
        owner: "roles".into(),
        lease_until: 0,
        finished_at: None,
    }
}

/// A source's first mapping, what the mapping calls read and write.
fn roles_mapping() -> leaderboard_rules::mapping::Mapping {
    let raw = serde_json::json!({"source": "roles-src", "version": 1, "fields": {
        "player_id": "/p", "match_id": "/m", "score": "/s", "game": {"const": "g"},
        "mode": {"const": "m"}, "region": {"const": "NA"}}});
    serde_json::from_value(raw).unwrap()
}

/// A board id no board has: what the seal calls write about.
/// An audit record with id `n`, about `player` if given.
fn audit_record(n: u64, player: Option<PlayerId>) -> AuditRecord {
    AuditRecord {
        id: format!("{n:013}-{:016x}", 0),
        at: n as i64,
        actor: "roles".into(),
        action: AuditAction::BoardStatus,
        reason: "roles".into(),
        leaderboard_id: None,
        game: None,
        player_id: player,
        detail: serde_json::Value::Null,
    }
}

fn roles_lb() -> LeaderboardId {
    LeaderboardId::parse("roles:sealed").unwrap()
}

impl Fixture {
    /// A commit of a row read before a write that has since happened (refused by its
    /// condition), with a correction's audit record or not.
    async fn commit_stale(
        &self,
        store: &DynamoScoreStore,
        lb: &LeaderboardId,
        dir: Direction,
        audit: Option<&AuditRecord>,
    ) -> Result<(), StoreError> {
        let stale = Row {
            rev: self.row.rev.map(|r| r + 100),
            ..self.row.clone()
        };
        let receipt = stale.receipts[0].clone();
        let outcome = store
            .commit(&Commit {
                buckets: None,
                audit,
                attempt: None,
                at: self.at(lb, dir, &stale),
                standing: Some(&self.standing),
                queue: None,
                receipt,
                ranked: true,
                now_s: 0,
            })
            .await?;
        assert_eq!(outcome, CommitOutcome::StandingChanged);
        Ok(())
    }

    /// The player's row on `lb` as `row` says it was read.
    fn at<'a>(
        &'a self,
        lb: &'a LeaderboardId,
        direction: Direction,
        row: &'a Row,
    ) -> leaderboard_core::store::RowAt<'a> {
        leaderboard_core::store::RowAt {
            board: lb,
            player: &self.player,
            direction,
            row,
            index_expire_at: None,
        }
    }

    fn sealed_window(&self) -> SealedWindow {
        serde_json::from_value(serde_json::json!({
            "leaderboard_id": roles_lb(), "game": "g", "mode": "m", "scope": "GLOBAL",
            "period": "WEEKLY", "window": "2026-W47", "start": 0, "end": 1,
        }))
        .expect("a sealed window")
    }

    fn history_row(&self) -> HistoryRow {
        HistoryRow {
            ties: leaderboard_rules::tiebreak::Ties::none(),
            player_id: PlayerId::parse("roles-nobody").unwrap(),
            window: self.sealed_window(),
            rank: 1,
            score: 1,
            reached_at: 0,
            league: None,
        }
    }

    fn reward(&self, player: &str) -> Reward {
        Reward {
            reward_id: roles_lb().to_string(),
            player_id: PlayerId::parse(player).unwrap(),
            window: self.sealed_window(),
            place: 1,
            score: 1,
            reward: "roles".into(),
            quantity: 1,
            decided_at: 0,
            expires_at: 0,
            status: RewardStatus::Unclaimed,
            claimed_at: None,
            claimed_by: None,
            claim_published: false,
        }
    }

    fn results(&self) -> Results {
        Results {
            window: self.sealed_window(),
            sealed_at: 1,
            total: 1,
            top: vec![Placing {
                ties: leaderboard_rules::tiebreak::Ties::none(),
                rank: 1,
                player_id: Some(PlayerId::parse("roles-nobody").unwrap()),
                score: 1,
                reached_at: 0,
            }],
            league: None,
            reward_table: None,
        }
    }
}

fn refused_by_iam(e: &StoreError) -> bool {
    format!("{e:?}").contains("AccessDeniedException")
}

#[tokio::test]
async fn each_function_may_make_exactly_the_store_calls_it_needs() {
    let env = TestEnv::new().await;
    let fx = Fixture::write(&env).await;
    let table = env.ctx.store.table().to_owned();
    let before = env.standings(fx.lb()).await;
    let mut mismatches = Vec::new();
    for (function, allowed) in ROLES {
        let client = dynamodb_client_as(&dynamodb_url(), &format!("fn-{function}")).await;
        let store = DynamoScoreStore::new(client, &table);
        let allowed: BTreeSet<&str> = allowed.iter().flat_map(|g| g.iter()).copied().collect();
        for name in CALLS.iter().flat_map(|g| g.iter()) {
            let got = match fx.call(&store, name).await {
                Ok(()) => true,
                Err(e) if refused_by_iam(&e) => false,
                Err(e) => panic!("{function} {name}: not an IAM refusal: {e:?}"),
            };
            if got != allowed.contains(name) {
                mismatches.push(format!(
                    "{function} {name}: {}",
                    if got { "allowed" } else { "refused" }
                ));
            }
        }
    }
    assert!(mismatches.is_empty(), "roles differ: {mismatches:#?}");
    // Refused writes reached nothing; allowed ones found their conditions unmet.
    assert_eq!(env.standings(fx.lb()).await, before);
    assert_eq!(
        env.ctx.store.get_checkpoint(fx.lb()).await.unwrap(),
        None,
        "the checkpoint was deleted again"
    );
}

#[tokio::test]
async fn unsigned_by_a_function_nothing_is_checked_and_an_unknown_function_gets_nothing() {
    // Tests and tools use other keys (an operator's are not limited by the roles);
    // a function the template does not define has no role at all.
    let env = TestEnv::new().await;
    let fx = Fixture::write(&env).await;
    let table = env.ctx.store.table().to_owned();
    for name in CALLS.iter().flat_map(|g| g.iter()) {
        fx.call(&env.ctx.store, name)
            .await
            .unwrap_or_else(|e| panic!("admin {name}: {e:?}"));
    }
    let client = dynamodb_client_as(&dynamodb_url(), "fn-NoSuchFunction").await;
    let stranger = DynamoScoreStore::new(client, &table);
    let err = fx.call(&stranger, "get_board").await.unwrap_err();
    assert!(refused_by_iam(&err), "{err:?}");
}
