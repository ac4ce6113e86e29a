//! Exports (docs/operations.md): a board's standings, or a sealed window's, written as a
//! CSV file to the stack's bucket, for prizes, community posts and support.
//!
//! An operator asks for one with a reason ([`start`]: audited, the job stored, handed to
//! a run of its own through the queue) and reads where it is ([`view`], [`list`]: once
//! done, with a short-lived link to the file). A run ([`run`]) holds the job's lease,
//! walks the board in rank order from DynamoDB (the seal's [`Walk`]), writes each page's
//! lines with the players' names and the metadata of their standings, and uploads a part
//! each time [`ExportSettings::part_bytes`] are written, saving its place with it. A run
//! out of time lets the lease go and hands the job on; a crashed one leaves its place
//! behind its lease and its queue message comes back. A board of any size is exported
//! this way, a part at a time, without passing through an API reply.
//!
//! A standing reached after the export was asked for moved during it: it is left out and
//! counted (`moved`), so no player is written twice. A closed or sealed board does not
//! move, and its file is the board whole.

use std::time::{Duration, Instant};

use serde::Serialize;
use tracing::{info, instrument};

use crate::service::ServiceError;
use crate::service::once::LEASE;
use crate::service::operator::{Operator, Reason, record};
use crate::service::seal::Walk;
use crate::store::{
    AuditAction, BoardStore, ExportFiles, ExportJob, ExportQueue, ExportStore, ExportTurn,
    ModerationStore, ProfileStore, RankedReads, RebuildStore, StandingStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::export::{
    ExportRow, ExportStatus, MIN_PART_BYTES, write_header, write_rows,
};
use leaderboard_rules::ids::{LeaderboardId, PlayerId};
use leaderboard_rules::order::RankKey;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

/// Standings read at a time.
const PAGE: usize = 1_000;
/// Exports a board's list shows.
pub const LIST_LIMIT: u32 = 20;

/// Tunables of exports.
#[derive(Debug, Clone, Copy)]
pub struct ExportSettings {
    /// Bytes per uploaded part (every part but the last): at least S3's 5 MiB.
    pub part_bytes: usize,
    /// How long a link to a file reads it.
    pub link_ttl: Duration,
    /// How long after it is asked for an export begins its walk: the rank order in
    /// DynamoDB (a secondary index) is eventually consistent, and a standing that moved
    /// just before the request must have reached its new place, or the walk could meet
    /// it at both.
    pub settle: Duration,
}

impl Default for ExportSettings {
    fn default() -> Self {
        Self {
            part_bytes: MIN_PART_BYTES,
            link_ttl: Duration::from_secs(15 * 60),
            settle: Duration::from_secs(2),
        }
    }
}

/// An export as replies show it.
#[derive(Debug, Serialize)]
pub struct ExportView {
    pub export_id: String,
    pub leaderboard_id: LeaderboardId,
    pub status: ExportStatus,
    pub requested_by: String,
    pub requested_at: String,
    pub reason: String,
    /// Lines written so far (the last one's rank).
    pub rows: u64,
    /// Standings left out because they moved after the export began.
    pub moved: u64,
    pub bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    /// Once done: a link that reads the file without credentials, until `url_expires_at`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url_expires_at: Option<String>,
}

/// `GET /leaderboards/{lb}/exports`.
#[derive(Debug, Serialize)]
pub struct ExportList {
    pub exports: Vec<ExportView>,
}

/// What a run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportOutcome {
    /// The file is whole.
    Done,
    /// Out of time: handed on to the next run.
    HandedOn,
    /// Done before, held by another run, or unknown.
    Passed,
}

async fn shown<F: ExportFiles>(
    files: &F,
    ttl: Duration,
    job: ExportJob,
) -> Result<ExportView, ServiceError> {
    let (url, url_expires_at) = match job.status {
        ExportStatus::Done => (
            Some(files.link(&job.object, ttl).await?),
            Some(rfc3339_ms(now_ms() + ttl.as_millis() as i64)),
        ),
        ExportStatus::Running => (None, None),
    };
    Ok(ExportView {
        export_id: job.id,
        leaderboard_id: job.leaderboard_id,
        status: job.status,
        requested_by: job.actor,
        requested_at: rfc3339_ms(job.requested_at),
        reason: job.reason,
        rows: job.rows,
        moved: job.moved,
        bytes: job.bytes,
        finished_at: job.finished_at.map(rfc3339_ms),
        url,
        url_expires_at,
    })
}

/// Asks for an export of `lb`'s standings: audited, stored and handed to a run.
#[instrument(skip(store, files, queue, settings, op, reason))]
pub async fn start<S, F, Q>(
    (store, files, queue): (&S, &F, &Q),
    settings: ExportSettings,
    op: &Operator,
    lb: &LeaderboardId,
    reason: Reason,
) -> Result<ExportView, ServiceError>
where
    S: BoardStore + ModerationStore + ExportStore,
    F: ExportFiles,
    Q: ExportQueue,
{
    if store.get_board(lb).await?.is_none() {
        return Err(ServiceError::BoardNotFound(lb.clone()));
    }
    let mut audit = record(op, AuditAction::Export, &reason);
    audit.leaderboard_id = Some(lb.clone());
    let job = ExportJob {
        object: format!("exports/{lb}/{}.csv", audit.id),
        id: audit.id.clone(),
        leaderboard_id: lb.clone(),
        actor: op.0.clone(),
        reason: reason.as_str().to_owned(),
        requested_at: audit.at,
        status: ExportStatus::Running,
        rows: 0,
        moved: 0,
        bytes: 0,
        after: None,
        upload: None,
        parts: Vec::new(),
        owner: String::new(),
        lease_until: 0,
        finished_at: None,
    };
    audit.detail = serde_json::json!({"export_id": job.id, "object": job.object});
    store.put_export(&job).await?;
    store.append_audit(&audit).await?;
    let turn = ExportTurn {
        leaderboard_id: lb.clone(),
        export_id: job.id.clone(),
    };
    queue.hand_on(&turn).await?;
    shown(files, settings.link_ttl, job).await
}

/// One export of `lb`; 404 `export_not_found` if there is none with this id.
pub async fn view<S: ExportStore, F: ExportFiles>(
    (store, files): (&S, &F),
    settings: ExportSettings,
    lb: &LeaderboardId,
    id: &str,
) -> Result<ExportView, ServiceError> {
    let job = store
        .get_export(lb, id)
        .await?
        .ok_or_else(|| ServiceError::ExportNotFound(id.to_owned()))?;
    shown(files, settings.link_ttl, job).await
}

/// The board's latest exports, newest first.
pub async fn list<S: ExportStore, F: ExportFiles>(
    (store, files): (&S, &F),
    settings: ExportSettings,
    lb: &LeaderboardId,
) -> Result<ExportList, ServiceError> {
    let mut exports = Vec::new();
    for job in store.list_exports(lb, LIST_LIMIT).await? {
        exports.push(shown(files, settings.link_ttl, job).await?);
    }
    Ok(ExportList { exports })
}

/// The lines written since the last part, not uploaded yet.
#[derive(Default)]
struct Part {
    bytes: Vec<u8>,
    rows: u64,
    moved: u64,
    last: Option<String>,
}

/// A run's hold on a job.
struct Held<'a, S> {
    store: &'a S,
    job: ExportJob,
    saved: Instant,
}

impl<S: ExportStore> Held<'_, S> {
    /// Saves the job and renews the lease; false if another run took it over.
    async fn save(&mut self) -> Result<bool, ServiceError> {
        self.job.lease_until = now_ms() + LEASE.as_millis() as i64;
        self.saved = Instant::now();
        Ok(self.store.save_export(&self.job).await?)
    }

    /// Renews the lease when a third of it has passed since the last save.
    async fn keep(&mut self) -> Result<bool, ServiceError> {
        if self.saved.elapsed() < LEASE / 3 {
            return Ok(true);
        }
        self.save().await
    }
}

/// Goes on with an export as far as `deadline` allows.
#[instrument(skip_all, fields(board = %turn.leaderboard_id, export = %turn.export_id))]
pub async fn run<S, F, Q>(
    (store, files, queue): (&S, &F, &Q),
    settings: ExportSettings,
    turn: &ExportTurn,
    deadline: Instant,
) -> Result<ExportOutcome, ServiceError>
where
    S: BoardStore + StandingStore + RankedReads + RebuildStore + ProfileStore + ExportStore,
    F: ExportFiles,
    Q: ExportQueue,
{
    let lb = &turn.leaderboard_id;
    let now = now_ms();
    let lease = now + LEASE.as_millis() as i64;
    let owner = super::run_id();
    let Some(job) = store
        .claim_export(lb, &turn.export_id, &owner, now, lease)
        .await?
    else {
        return Ok(ExportOutcome::Passed);
    };
    let board = store
        .get_board(lb)
        .await?
        .ok_or_else(|| ServiceError::BoardNotFound(lb.clone()))?;
    let settled = job.requested_at + settings.settle.as_millis() as i64 - now_ms();
    if settled > 0 {
        tokio::time::sleep(Duration::from_millis(settled as u64)).await;
    }
    let mut held = Held {
        store,
        job,
        saved: Instant::now(),
    };
    let dir = board.policy.direction();
    let after = (held.job.after.as_deref()).and_then(|k| RankKey::from_sort_key(dir, k));
    let mut walk = Walk::new(store, lb, dir, board.rank_index, after);
    let mut part = Part::default();
    if held.job.parts.is_empty() {
        write_header(&mut part.bytes);
    }
    loop {
        let page = walk.next(PAGE).await?;
        let end = page.len() < PAGE;
        lines(store, &board, &held.job, &page, &mut part).await?;
        if part.bytes.len() >= settings.part_bytes.max(1) || end {
            if !held.keep().await? {
                return Ok(ExportOutcome::Passed);
            }
            if !part.bytes.is_empty() {
                upload(files, &mut held.job, std::mem::take(&mut part)).await?;
            }
            if end {
                let job = &mut held.job;
                let upload = job.upload.clone().unwrap_or_default();
                files.finish(&job.object, &upload, &job.parts).await?;
                job.status = ExportStatus::Done;
                job.finished_at = Some(now_ms());
                job.after = None;
            }
            if !held.save().await? {
                return Ok(ExportOutcome::Passed);
            }
            if end {
                let job = &held.job;
                info!(
                    rows = job.rows,
                    moved = job.moved,
                    bytes = job.bytes,
                    "export written"
                );
                return Ok(ExportOutcome::Done);
            }
        } else if !held.keep().await? {
            return Ok(ExportOutcome::Passed);
        }
        if Instant::now() >= deadline {
            // The lines not uploaded yet are read again by the next run, from the last
            // part's end; the lease goes at once so that run need not wait for it.
            held.job.lease_until = 0;
            if !held.store.save_export(&held.job).await? {
                return Ok(ExportOutcome::Passed);
            }
            queue.hand_on(turn).await?;
            return Ok(ExportOutcome::HandedOn);
        }
    }
}

/// Appends a page's lines to the part: each standing with its player's name and its
/// metadata, those that moved after the export began left out.
async fn lines<S: StandingStore + ProfileStore>(
    store: &S,
    board: &Board,
    job: &ExportJob,
    page: &[RankKey],
    part: &mut Part,
) -> Result<(), ServiceError> {
    let dir = board.policy.direction();
    let lb = &board.leaderboard_id;
    let kept: Vec<(&RankKey, PlayerId)> = page
        .iter()
        .filter_map(|k| Some((k, PlayerId::parse(&k.player).ok()?)))
        .filter(|(k, _)| k.reached_at <= job.requested_at)
        .collect();
    part.moved += (page.len() - kept.len()) as u64;
    if let Some(last) = page.last() {
        part.last = Some(last.sort_key(dir));
    }
    let players: Vec<PlayerId> = kept.iter().map(|(_, p)| p.clone()).collect();
    let standings: Vec<_> = players.iter().map(|p| (lb.clone(), p.clone())).collect();
    let (cards, metadata) =
        futures::try_join!(store.get_cards(&players), store.get_metadata(&standings))?;
    let first = job.rows + part.rows + 1;
    let shown: Vec<_> = kept
        .iter()
        .map(
            |(k, _)| match serde_json::to_value(board.scores.show_scaled(k.score.get())) {
                Ok(serde_json::Value::String(s)) => s,
                Ok(v) => v.to_string(),
                Err(_) => k.score.get().to_string(),
            },
        )
        .collect();
    let rows: Vec<ExportRow<'_>> = kept
        .iter()
        .zip(first..)
        .zip(cards.iter().zip(&metadata).zip(shown))
        .map(|(((k, _), rank), ((card, meta), score))| ExportRow {
            rank,
            player_id: &k.player,
            display_name: card.card.display_name.as_deref(),
            score,
            reached_at: rfc3339_ms(k.reached_at),
            metadata: meta.as_ref().map(|m| m.as_str().to_owned()),
        })
        .collect();
    write_rows(&mut part.bytes, &rows);
    part.rows += rows.len() as u64;
    Ok(())
}

/// Uploads the part (beginning the upload first if need be) and counts it in the job.
async fn upload<F: ExportFiles>(
    files: &F,
    job: &mut ExportJob,
    part: Part,
) -> Result<(), ServiceError> {
    let upload = match &job.upload {
        Some(u) => u.clone(),
        None => {
            let u = files.begin(&job.object).await?;
            job.upload = Some(u.clone());
            u
        }
    };
    let n = job.parts.len() as u32 + 1;
    job.bytes += part.bytes.len() as u64;
    let etag = files.put_part(&job.object, &upload, n, part.bytes).await?;
    job.parts.push(etag);
    job.rows += part.rows;
    job.moved += part.moved;
    if part.last.is_some() {
        job.after = part.last;
    }
    Ok(())
}
