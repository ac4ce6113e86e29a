//! The in-memory store's stream: every standing written, in order, read as the
//! projector's batches and, by sequence number, as the repair reads a range again.

use super::store::MemoryStore;
use crate::service::ttl_cache::lock;
use crate::store::StoreError;
use crate::store::{IndexEntry, StreamBatch, StreamRange, StreamSource};

impl MemoryStore {
    /// The stream's records from sequence number `from` (1-based) on.
    pub fn stream_since(&self, from: usize) -> Vec<IndexEntry> {
        lock(&self.tables)
            .stream
            .iter()
            .skip(from.saturating_sub(1))
            .cloned()
            .collect()
    }

    /// The stream as one batch, as the projector would get it.
    pub fn stream_batch(&self) -> StreamBatch {
        let entries = self.stream_since(1);
        StreamBatch {
            sequence_numbers: (1..=entries.len()).map(|i| Some(i.to_string())).collect(),
            entries,
            ..StreamBatch::default()
        }
    }

    /// Drops the stream's records before sequence number `before` (its 24 hours passed).
    pub fn trim_stream(&self, before: usize) {
        lock(&self.tables).trimmed_before = before;
    }
}

impl StreamSource for MemoryStore {
    /// The range's records by sequence number (decimal, 1-based); `None` when any of it
    /// was trimmed.
    async fn read_range(&self, range: &StreamRange) -> Result<Option<StreamBatch>, StoreError> {
        let (Ok(start), Ok(end)) = (range.start.parse::<usize>(), range.end.parse::<usize>())
        else {
            return Ok(None);
        };
        self.with(|t| {
            if start < t.trimmed_before.max(1) {
                return None;
            }
            let entries: Vec<IndexEntry> =
                t.stream.iter().take(end).skip(start - 1).cloned().collect();
            Some(StreamBatch {
                sequence_numbers: (start..start + entries.len())
                    .map(|i| Some(i.to_string()))
                    .collect(),
                entries,
                ..StreamBatch::default()
            })
        })
    }
}
