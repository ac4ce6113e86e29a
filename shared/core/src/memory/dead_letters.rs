//! The in-memory [`DeadLetters`]: keeps what was sent; can be taken down.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::service::ttl_cache::lock;
use crate::store::QueueError;
use crate::store::{DeadLetter, DeadLetterCount, DeadLetters};

#[derive(Default)]
pub struct MemoryDeadLetters {
    pub sent: Mutex<Vec<DeadLetter>>,
    down: AtomicBool,
}

impl MemoryDeadLetters {
    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }
}

impl DeadLetters for MemoryDeadLetters {
    async fn send(&self, letters: &[DeadLetter]) -> Result<(), QueueError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(QueueError::Call {
                op: "SendMessageBatch",
                source: "the queue is down".into(),
            });
        }
        lock(&self.sent).extend_from_slice(letters);
        Ok(())
    }

    async fn count(&self) -> Result<DeadLetterCount, QueueError> {
        Ok(DeadLetterCount {
            waiting: lock(&self.sent).len() as u64,
            in_flight: 0,
        })
    }
}
