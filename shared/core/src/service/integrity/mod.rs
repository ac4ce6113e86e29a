//! Integrity: a result that breaks its board's rules is held for review instead of
//! applied (docs/integrity.md). The write path judges and holds it (its `decide` and
//! `commit` stages, [`crate::service::write`]); here:
//!
//! - `queue`: the operators' review queue, a game's held results oldest first, a match
//!   listed once with its boards.
//! - `decision`: approve (applied as the board's policy would have applied it when it
//!   arrived) or reject a match, on every board that held it; each decision once.
//! - `ban_after`: the ban a player's rejected matches reach.
//! - `dry_run`: which of a board's standings a candidate rule set would have held.

mod ban_after;
mod decision;
mod dry_run;
mod queue;

pub use decision::{BoardDecided, Decision, DecisionReply, decide};
pub use dry_run::{DryRunReply, MAX_DRY_RUN, WouldHold, dry_run};
pub use queue::{HeldBoard, HeldId, HeldView, MAX_HELD_ID, QueuePage, list};
