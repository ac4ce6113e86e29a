//! The in-memory [`ExportStore`], a bucket that keeps what was uploaded ([`MemoryFiles`])
//! and the jobs' queue, which keeps what was handed on ([`MemoryJobQueue`]).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use super::store::MemoryStore;
use crate::service::ttl_cache::lock;
use crate::store::{
    ExportFiles, ExportJob, ExportStore, ExportTurn, JobQueue, JobTurn, StoreError,
};
use leaderboard_rules::export::ExportStatus;
use leaderboard_rules::ids::LeaderboardId;

impl ExportStore for MemoryStore {
    async fn put_export(&self, job: &ExportJob) -> Result<(), StoreError> {
        self.with(|t| {
            let key = (job.leaderboard_id.clone(), job.id.clone());
            t.exports.entry(key).or_insert_with(|| job.clone());
        })
    }

    async fn get_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
    ) -> Result<Option<ExportJob>, StoreError> {
        self.with(|t| t.exports.get(&(lb.clone(), id.to_owned())).cloned())
    }

    async fn list_exports(
        &self,
        lb: &LeaderboardId,
        limit: u32,
    ) -> Result<Vec<ExportJob>, StoreError> {
        self.with(|t| {
            (t.exports.iter().rev())
                .filter(|((b, _), _)| b == lb)
                .take(limit as usize)
                .map(|(_, j)| j.clone())
                .collect()
        })
    }

    async fn claim_export(
        &self,
        lb: &LeaderboardId,
        id: &str,
        owner: &str,
        now: i64,
        lease_until: i64,
    ) -> Result<Option<ExportJob>, StoreError> {
        self.with(|t| {
            let job = t.exports.get_mut(&(lb.clone(), id.to_owned()))?;
            if job.status != ExportStatus::Running || job.lease_until >= now {
                return None;
            }
            job.owner = owner.to_owned();
            job.lease_until = lease_until;
            Some(job.clone())
        })
    }

    async fn save_export(&self, job: &ExportJob) -> Result<bool, StoreError> {
        self.with(|t| {
            match t
                .exports
                .get_mut(&(job.leaderboard_id.clone(), job.id.clone()))
            {
                Some(held) if held.owner == job.owner => {
                    *held = job.clone();
                    true
                }
                _ => false,
            }
        })
    }
}

/// An upload in the twin bucket: its parts by number.
type Upload = (String, HashMap<u32, Vec<u8>>);

/// A bucket in memory: uploads by id, finished files by key.
#[derive(Default)]
pub struct MemoryFiles {
    uploads: Mutex<HashMap<String, Upload>>,
    files: Mutex<HashMap<String, Vec<u8>>>,
}

impl MemoryFiles {
    /// A finished file's bytes.
    pub fn file(&self, object: &str) -> Option<Vec<u8>> {
        lock(&self.files).get(object).cloned()
    }
}

impl ExportFiles for MemoryFiles {
    async fn begin(&self, object: &str) -> Result<String, StoreError> {
        let mut uploads = lock(&self.uploads);
        let id = format!("upload-{}", uploads.len() + 1);
        uploads.insert(id.clone(), (object.to_owned(), HashMap::new()));
        Ok(id)
    }

    async fn put_part(
        &self,
        _object: &str,
        upload: &str,
        n: u32,
        bytes: Vec<u8>,
    ) -> Result<String, StoreError> {
        let mut uploads = lock(&self.uploads);
        let Some((_, parts)) = uploads.get_mut(upload) else {
            return Err(StoreError::Corrupt(format!("no upload {upload}")));
        };
        let etag = format!("{n}-{}", bytes.len());
        parts.insert(n, bytes);
        Ok(etag)
    }

    async fn finish(&self, object: &str, upload: &str, parts: &[String]) -> Result<(), StoreError> {
        let Some((_, mut uploaded)) = lock(&self.uploads).remove(upload) else {
            // Completed before.
            return match lock(&self.files).contains_key(object) {
                true => Ok(()),
                false => Err(StoreError::Corrupt(format!("no upload {upload}"))),
            };
        };
        let mut file = Vec::new();
        for (n, etag) in (1..).zip(parts) {
            let part = uploaded.remove(&n).unwrap_or_default();
            if &format!("{n}-{}", part.len()) != etag {
                return Err(StoreError::Corrupt(format!("part {n} is not {etag}")));
            }
            file.extend(part);
        }
        lock(&self.files).insert(object.to_owned(), file);
        Ok(())
    }

    async fn link(&self, object: &str, ttl: Duration) -> Result<String, StoreError> {
        Ok(format!("memory://{object}?ttl={}", ttl.as_secs()))
    }
}

/// A queue in memory: the turns handed on, in order, each with its delay; while `down`,
/// it refuses them.
#[derive(Default)]
pub struct MemoryJobQueue {
    pub turns: Mutex<Vec<(JobTurn, Duration)>>,
    pub down: std::sync::atomic::AtomicBool,
}

impl MemoryJobQueue {
    /// The export turns handed on, in order.
    pub fn exports(&self) -> Vec<ExportTurn> {
        (lock(&self.turns).iter())
            .filter_map(|(t, _)| match t {
                JobTurn::Export(e) => Some(e.clone()),
                JobTurn::Reset(_) => None,
            })
            .collect()
    }
}

impl JobQueue for MemoryJobQueue {
    async fn hand_on(&self, turn: &JobTurn, delay: Duration) -> Result<(), StoreError> {
        if self.down.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(super::store_outage());
        }
        lock(&self.turns).push((turn.clone(), delay));
        Ok(())
    }
}
