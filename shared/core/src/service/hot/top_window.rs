//! Each container's copy of a board's top window, refreshed only when its version moved,
//! and of the cards of its first entries, reused for a short time (`card_ttl`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::service::ttl_cache::lock;
use crate::store::{IndexError, RankIndex, RowCards, RowMetadata};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::{BoardOrder, Direction, RankKey};
use leaderboard_rules::profile::Metadata;

/// A board's top window as this container last read it.
struct Held {
    version: String,
    entries: Arc<Vec<RankKey>>,
    /// What was read for the window's first entries (as many as were asked), at
    /// `read_at`: their metadata (which moves only with the window's version) and their
    /// cards, if this index sends them.
    named: Option<Named>,
}

/// The cards and metadata of a window's first entries as read together.
#[derive(Clone)]
struct Named {
    read_at: Instant,
    cards: RowCards,
    metadata: Vec<Option<Metadata>>,
}

impl Named {
    fn of(read_at: Instant, cards: &RowCards, metadata: &RowMetadata) -> Option<Self> {
        Some(Self {
            read_at,
            cards: cards.clone(),
            metadata: metadata.clone()?,
        })
    }
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
    /// The same entries' metadata, if read with them.
    pub metadata: RowMetadata,
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
    /// they changed since this container last read them, and the cards and metadata of
    /// its first `named` entries: read with the entries when they changed, otherwise
    /// reused from the held copy for `card_ttl`, read again after it (so a rename shows
    /// within it).
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
        let (known, held_named) = match lock(&self.held).get(lb) {
            Some(h) => (Some(h.version.clone()), self.fresh_named(h, named)),
            None => (None, None),
        };
        let fresh = index
            .top_window(
                BoardOrder::new(lb, dir),
                known.as_deref(),
                named,
                held_named.is_some(),
            )
            .await?;
        let mut held = lock(&self.held);
        let (entries, (cards, metadata)) = match fresh.entries {
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
                        named: Named::of(asked, &fresh.cards, &fresh.metadata),
                    },
                );
                (entries, (fresh.cards, fresh.metadata))
            }
            None => match held.get_mut(lb) {
                Some(h) if h.version == fresh.version => {
                    let read = match (held_named, fresh.metadata.is_some()) {
                        (Some(kept), false) => (kept.cards, Some(kept.metadata)),
                        _ => {
                            h.named = Named::of(asked, &fresh.cards, &fresh.metadata);
                            (fresh.cards, fresh.metadata)
                        }
                    };
                    (h.entries.clone(), read)
                }
                _ => return Ok(None),
            },
        };
        Ok(Some(WindowRead {
            entries,
            total: fresh.total,
            clock: fresh.clock,
            cards,
            metadata,
        }))
    }

    /// What is held for the window's first `named` entries, if read within `card_ttl`
    /// (cut to them).
    fn fresh_named(&self, held: &Held, named: u64) -> Option<Named> {
        let kept = held.named.as_ref()?;
        let wanted = (named as usize).min(held.entries.len());
        let enough =
            kept.metadata.len() >= wanted && kept.cards.as_ref().is_none_or(|c| c.len() >= wanted);
        (named > 0 && kept.read_at.elapsed() < self.card_ttl && enough).then(|| Named {
            read_at: kept.read_at,
            cards: kept.cards.as_ref().map(|c| c[..wanted].to_vec()),
            metadata: kept.metadata[..wanted].to_vec(),
        })
    }
}
