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

mod run;

use std::time::Duration;

use serde::Serialize;
use tracing::instrument;

pub use run::run;

use crate::service::ServiceError;
use crate::service::operator::{Operator, Reason, record};
use crate::store::{
    AuditAction, BoardStore, ExportFiles, ExportJob, ExportStore, ExportTurn, JobQueue, JobTurn,
    ModerationStore,
};
use leaderboard_rules::export::{ExportStatus, MIN_PART_BYTES};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

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
        ExportStatus::Running | ExportStatus::Failed => (None, None),
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
    Q: JobQueue,
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
    let turn = JobTurn::Export(ExportTurn {
        leaderboard_id: lb.clone(),
        export_id: job.id.clone(),
    });
    if let Err(e) = queue.hand_on(&turn, Duration::ZERO).await {
        // No run will take it: it is marked failed (best effort: the reply is the queue's
        // error either way), so the list does not show it running for ever.
        let failed = ExportJob {
            status: ExportStatus::Failed,
            ..job
        };
        store.save_export(&failed).await.ok();
        return Err(e.into());
    }
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
