//! A run of an export: its lease held, the board walked from where the last run stopped,
//! each page's lines written, a part uploaded (and the place saved) every
//! [`ExportSettings::part_bytes`], the job handed on when time runs out.

use std::time::{Duration, Instant};

use tracing::{info, instrument};

use super::{ExportOutcome, ExportSettings};
use crate::service::ServiceError;
use crate::service::once::LEASE;
use crate::service::seal::Walk;
use crate::store::{
    BoardStore, ExportFiles, ExportJob, ExportStore, ExportTurn, JobQueue, JobTurn, ProfileStore,
    RankedReads, RebuildStore, StandingStore,
};
use leaderboard_rules::board::Board;
use leaderboard_rules::export::{ExportRow, ExportStatus, write_header, write_rows};
use leaderboard_rules::ids::PlayerId;
use leaderboard_rules::order::RankKey;
use leaderboard_rules::time::{now_ms, rfc3339_ms};

/// Standings read at a time.
const PAGE: usize = 1_000;

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
    Q: JobQueue,
{
    let lb = &turn.leaderboard_id;
    let now = now_ms();
    let lease = now + LEASE.as_millis() as i64;
    let owner = crate::service::run_id();
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
            let turn = JobTurn::Export(turn.clone());
            queue.hand_on(&turn, Duration::ZERO).await?;
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
