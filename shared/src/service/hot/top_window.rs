//! Each container's copy of a board's top window, refreshed only when its version moved.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey};
use crate::store::IndexError;
use crate::store::{RankIndex, RowCards};
use crate::ttl_cache::lock;

/// A board's top window as this container last read it.
struct Held {
    version: String,
    entries: Arc<Vec<RankKey>>,
}

/// The best `n` of a board, read through its top window.
pub struct WindowRead {
    /// The window (the first [`crate::store::TOP_WINDOW`] places, fewer on a smaller board).
    pub entries: Arc<Vec<RankKey>>,
    /// The board's size.
    pub total: u64,
    /// The index's clock at the read (see [`crate::store::Slice::clock`]).
    pub clock: i64,
    /// The cards of the window's first `named` entries, if read with them.
    pub cards: RowCards,
}

/// Boards whose top window a container holds at most (1,000 entries each).
const MAX_HELD_WINDOWS: usize = 256;

/// Each board's top window held by this container.
#[derive(Default)]
pub struct TopWindows {
    held: Mutex<HashMap<LeaderboardId, Held>>,
}

impl TopWindows {
    /// The board's current top window: one round trip that returns the entries only if
    /// they changed since this container last read them, and the cards of its first
    /// `named` entries either way (names are never held: a rename shows at once).
    /// `None` when another reader replaced the held copy meanwhile (the caller reads
    /// the index directly).
    pub async fn read<I: RankIndex>(
        &self,
        index: &I,
        lb: &LeaderboardId,
        dir: Direction,
        named: u64,
    ) -> Result<Option<WindowRead>, IndexError> {
        let known = lock(&self.held).get(lb).map(|h| h.version.clone());
        let fresh = index.top_window(lb, dir, known.as_deref(), named).await?;
        let mut held = lock(&self.held);
        let entries = match fresh.entries {
            Some(entries) => {
                let entries = Arc::new(entries);
                // Bounded: a container serving many boards keeps the recent ones.
                if held.len() >= MAX_HELD_WINDOWS && !held.contains_key(lb) {
                    held.clear();
                }
                held.insert(
                    lb.clone(),
                    Held {
                        version: fresh.version,
                        entries: entries.clone(),
                    },
                );
                entries
            }
            None => match held.get(lb) {
                Some(h) if h.version == fresh.version => h.entries.clone(),
                _ => return Ok(None),
            },
        };
        Ok(Some(WindowRead {
            entries,
            total: fresh.total,
            clock: fresh.clock,
            cards: fresh.cards,
        }))
    }
}
