//! Exports: a board's standings written as a CSV file to the stack's bucket. The job's
//! progress ([`ExportStore`], claimed and kept with a lease as a seal's is), the file
//! written by multipart upload and read by a short-lived link ([`ExportFiles`]), and the
//! turn a queue message hands to the next run ([`ExportTurn`], on the jobs' queue:
//! `super::jobs`).

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::store::StoreError;
use leaderboard_rules::export::ExportStatus;
use leaderboard_rules::ids::LeaderboardId;

/// An export and how far it got. A run holds it with a lease (`owner`, `lease_until`);
/// its progress is saved at each part uploaded, so a run that stops loses at most the
/// rows of the part it was filling, which the next run reads again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportJob {
    /// The id of the audit record that asked for it (unique, ordered by time).
    pub id: String,
    pub leaderboard_id: LeaderboardId,
    pub actor: String,
    pub reason: String,
    /// When it was asked for, ms since the epoch: a standing reached after this moved
    /// during the export, and is left out (counted in `moved`).
    pub requested_at: i64,
    pub status: ExportStatus,
    /// The file's key in the bucket.
    pub object: String,
    /// Lines written (and uploaded) so far, the header aside: the last one's rank.
    pub rows: u64,
    /// Standings left out because they moved after the export began.
    pub moved: u64,
    /// Bytes uploaded so far.
    pub bytes: u64,
    /// The rank sort key of the last standing uploaded (cleared once done: it names a
    /// player).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// The multipart upload, once begun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload: Option<String>,
    /// The uploaded parts' ETags: part `n` is `parts[n - 1]`.
    #[serde(default)]
    pub parts: Vec<String>,
    pub owner: String,
    pub lease_until: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<i64>,
}

/// Where exports' progress is kept.
pub trait ExportStore: Send + Sync {
    /// Stores a new job (never over an existing one with its id).
    fn put_export(&self, job: &ExportJob) -> impl Future<Output = Result<(), StoreError>> + Send;

    fn get_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
    ) -> impl Future<Output = Result<Option<ExportJob>, StoreError>> + Send;

    /// The board's exports, newest first, at most `limit`.
    fn list_exports(
        &self,
        lb: &LeaderboardId,
        limit: u32,
    ) -> impl Future<Output = Result<Vec<ExportJob>, StoreError>> + Send;

    /// Takes the lease for `owner` until `lease_until` if the job is running and no one
    /// holds an unexpired lease. The job as claimed, or `None` (done, held, or unknown).
    fn claim_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> impl Future<Output = Result<Option<ExportJob>, StoreError>> + Send;

    /// Stores the progress if `job.owner` still holds the lease; false if another run
    /// took it over (the caller stops).
    fn save_export(&self, job: &ExportJob)
    -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// The bucket exports are written to.
pub trait ExportFiles: Send + Sync {
    /// Begins a multipart upload of `object`: its upload id.
    fn begin(&self, object: &str) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// Uploads part `n` (from 1; the same `n` again replaces it): its ETag.
    fn put_part(
        &self,
        object: &str,
        upload: &str,
        n: u32,
        bytes: Vec<u8>,
    ) -> impl Future<Output = Result<String, StoreError>> + Send;

    /// Joins the parts into the file. Completing an upload completed before is not an
    /// error (a run that stopped just after it goes on).
    fn finish(
        &self,
        object: &str,
        upload: &str,
        parts: &[String],
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A link that reads the file for `ttl`, without credentials.
    fn link(
        &self,
        object: &str,
        ttl: Duration,
    ) -> impl Future<Output = Result<String, StoreError>> + Send;
}

/// Which export a run is to take on (the body of one queue message).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExportTurn {
    pub leaderboard_id: LeaderboardId,
    pub export_id: String,
}
