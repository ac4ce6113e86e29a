//! The stream projector: a batch of standings from the table's stream (decoded at the
//! edge, see `leaderboard::adapters::dynamodb::decode`) in, version-checked index applies out.
//!
//! Poison records (images that cannot be decoded) are counted in the
//! `ProjectorPoisonRecords` metric and never block the shard. If the index fails, every
//! record of the batch that carried a standing is named for retry, and Lambda retries
//! from the first of them; applies are absolute and version-checked, so re-applying is
//! harmless.
//! A batch that exhausts its retries goes to the repair queue, whose consumer reads the
//! range again (see [`super::repair`]). Boards whose index turns out not ready are
//! reported for repair.

use tracing::{error, info, instrument};

use super::repair::Reporter;
use crate::store::{CardCopies, IndexUpkeep, IndexWrites, StreamBatch};

/// Counts of one batch, logged once per invocation.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    pub applied: usize,
    pub stale: usize,
    pub skipped: usize,
    pub poison: usize,
    pub failed: usize,
}

/// Applies a stream batch to the index; returns the sequence numbers of the records to
/// retry (all of the batch's standings if the index failed, else none).
#[instrument(skip_all, fields(records = batch.entries.len() + batch.cards.len()))]
pub async fn project<I: IndexWrites + IndexUpkeep + CardCopies>(
    index: &I,
    repairs: &Reporter,
    batch: StreamBatch,
) -> (Vec<Option<String>>, BatchStats) {
    let mut stats = BatchStats {
        skipped: batch.skipped,
        poison: batch.poison,
        ..BatchStats::default()
    };
    let batch_written = batch.oldest_at_ms;
    let mut retry = Vec::new();
    match index.apply_many(&batch.entries).await {
        Ok(applied) => {
            stats.applied = applied.applied.iter().filter(|a| **a).count();
            stats.stale = applied.applied.len() - stats.applied;
            for (board, health) in &applied.unready {
                repairs.report(index, board, *health).await;
            }
        }
        Err(e) => {
            stats.failed = batch.sequence_numbers.len();
            error!(error = %e, source = ?std::error::Error::source(&e), failed = stats.failed, "index apply failed; reporting the batch for retry");
            retry = batch.sequence_numbers;
        }
    }
    // Renames: the cards' copies, version-checked like the standings.
    if !batch.cards.is_empty() {
        match index.put_cards(&batch.cards).await {
            Ok(()) => stats.applied += batch.cards.len(),
            Err(e) => {
                stats.failed += batch.card_sequence_numbers.len();
                error!(error = %e, "card copies failed; reporting them for retry");
                retry.extend(batch.card_sequence_numbers);
            }
        }
    }
    if let Some(oldest) = batch_written {
        let behind_ms = leaderboard_rules::time::now_ms()
            .saturating_sub(oldest)
            .max(0);
        crate::service::metrics::gauge("StreamLagSeconds", behind_ms as f64 / 1000.0);
    }
    crate::service::metrics::count(&[
        ("ProjectorApplied", stats.applied as u64),
        ("ProjectorStale", stats.stale as u64),
        ("ProjectorPoisonRecords", stats.poison as u64),
        ("ProjectorFailedRecords", stats.failed as u64),
    ]);
    info!(
        applied = stats.applied,
        stale = stats.stale,
        skipped = stats.skipped,
        poison = stats.poison,
        failed = stats.failed,
        "batch projected"
    );
    (retry, stats)
}
