//! Each container's copy of a board's top window, refreshed only when its version moved,
//! and of the cards of its first entries, reused for a short time (`card_ttl`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::ids::LeaderboardId;
use crate::order::{Direction, RankKey};
use crate::store::IndexError;
use crate::store::{RankIndex, RowCards, VersionedCard};
use crate::ttl_cache::lock;

/// A board's top window as this container last read it.
struct Held {
    version: String,
    entries: Arc<Vec<RankKey>>,
    /// The cards of the window's first entries (as many as were asked), read at `at`.
    cards: Option<(Instant, Vec<Option<VersionedCard>>)>,
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
pub struct TopWindows {
    held: Mutex<HashMap<LeaderboardId, Held>>,
    /// How long a held window's cards are reused (zero: never; a rename shows in a
    /// top read at most this much later, plus the reply cache's TTL).
    card_ttl: Duration,
}

impl TopWindows {
    pub fn new(card_ttl: Duration) -> Self {
        Self {
            held: Mutex::default(),
            card_ttl,
        }
    }

    /// The board's current top window: one round trip that returns the entries only if
    /// they changed since this container last read them, and the cards of its first
    /// `named` entries: read with the entries when they changed, otherwise reused from
    /// the held copy for `card_ttl`, read again after it (so a rename shows within it).
    /// `None` when another reader replaced the held copy meanwhile (the caller reads
    /// the index directly).
    pub async fn read<I: RankIndex>(
        &self,
        index: &I,
        lb: &LeaderboardId,
        dir: Direction,
        named: u64,
    ) -> Result<Option<WindowRead>, IndexError> {
        let asked = Instant::now();
        let (known, held_cards) = match lock(&self.held).get(lb) {
            Some(h) => (Some(h.version.clone()), self.fresh_cards(h, named)),
            None => (None, None),
        };
        let fresh = index
            .top_window(lb, dir, known.as_deref(), named, held_cards.is_some())
            .await?;
        let mut held = lock(&self.held);
        let (entries, cards) = match fresh.entries {
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
                        cards: fresh.cards.clone().map(|c| (asked, c)),
                    },
                );
                (entries, fresh.cards)
            }
            None => match held.get_mut(lb) {
                Some(h) if h.version == fresh.version => {
                    let cards = match fresh.cards {
                        Some(read) => {
                            h.cards = Some((asked, read.clone()));
                            Some(read)
                        }
                        None => held_cards,
                    };
                    (h.entries.clone(), cards)
                }
                _ => return Ok(None),
            },
        };
        Ok(Some(WindowRead {
            entries,
            total: fresh.total,
            clock: fresh.clock,
            cards,
        }))
    }

    /// The held cards of the window's first `named` entries, if read within `card_ttl`.
    fn fresh_cards(&self, held: &Held, named: u64) -> Option<Vec<Option<VersionedCard>>> {
        let (at, cards) = held.cards.as_ref()?;
        let wanted = (named as usize).min(held.entries.len());
        (named > 0 && at.elapsed() < self.card_ttl && cards.len() >= wanted)
            .then(|| cards[..wanted].to_vec())
    }
}
