//! Receipts kept in the player's row (docs/cost.md has the protocol and its proof).
//!
//! A player's row on a board (their standing, or the tombstone of a removed one) keeps
//! the receipts of their latest matches on that board, newest first. A result is then
//! one conditional write of one item: the row, with the new receipt in it. When a row
//! holds more than [`INLINE_RECEIPTS`], the oldest go to receipt items of their own
//! (written before the row that lets them go), and the row remembers until when such a
//! receipt may still be asked for (`archived_until`). A match is new only if neither the
//! row nor, while `archived_until` lies ahead, its receipt item knows it.

use super::{Receipt, Row};
use leaderboard_rules::ids::MatchId;

/// Receipts a row keeps in itself. Four keep a row with 36-character match ids under
/// 1 KB, one write unit (docs/cost.md).
pub const INLINE_RECEIPTS: usize = 4;

/// A receipt as a row keeps it: the match it answers and when it may be forgotten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptReceipt {
    pub match_id: MatchId,
    pub receipt: Receipt,
    /// Epoch seconds after which a retry no longer gets this receipt.
    pub expires_at: i64,
}

/// What a write keeps in the row and what it moves out to receipt items first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Newest first, at most [`INLINE_RECEIPTS`].
    pub inline: Vec<KeptReceipt>,
    /// The receipts that leave the row; stored on their own before the row is written.
    pub archived: Vec<KeptReceipt>,
    /// Epoch seconds until which a receipt item of this row's may still answer.
    pub archived_until: Option<i64>,
}

impl Row {
    /// The receipt of `match_id` the row itself keeps, if any.
    pub fn kept_receipt(&self, match_id: &MatchId) -> Option<&Receipt> {
        (self.receipts.iter())
            .find(|k| &k.match_id == match_id)
            .map(|k| &k.receipt)
    }

    /// The revision a write of this row gives it (the first write's is 1).
    pub fn next_rev(&self) -> u64 {
        self.rev.map_or(1, |r| r + 1)
    }

    /// Whether a receipt item of this row's may still answer at `now_s`: some receipt
    /// left the row and has not expired, or the row predates kept receipts (its
    /// receipts are all items of their own).
    pub fn may_have_archived(&self, now_s: i64) -> bool {
        self.predates_kept_receipts() || self.archived_until.is_some_and(|at| at > now_s)
    }

    /// A row written before rows kept receipts: it exists but has no revision.
    pub fn predates_kept_receipts(&self) -> bool {
        self.rev.is_none() && self.version.is_some()
    }

    /// The receipts after `new` joins them at `now_s`: expired ones dropped, the
    /// newest [`INLINE_RECEIPTS`] kept, the rest archived.
    pub fn keep(&self, new: KeptReceipt, now_s: i64) -> Kept {
        let mut inline: Vec<KeptReceipt> = std::iter::once(new.clone())
            .chain(self.receipts.iter().cloned())
            .filter(|k| k.expires_at > now_s)
            .collect();
        let archived = inline.split_off(inline.len().min(INLINE_RECEIPTS));
        // A row from before kept receipts may have receipt items as young as this one.
        let legacy = self.predates_kept_receipts().then_some(new.expires_at);
        let archived_until = (self.archived_until.filter(|at| *at > now_s))
            .into_iter()
            .chain(archived.iter().map(|k| k.expires_at))
            .chain(legacy)
            .max();
        Kept {
            inline,
            archived,
            archived_until,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaderboard_rules::score::Score;

    fn kept(m: &str, expires_at: i64) -> KeptReceipt {
        KeptReceipt {
            match_id: MatchId::parse(m).unwrap(),
            receipt: Receipt {
                set: false,
                metadata_digest: None,
                submitted: Score::new("score", 1).unwrap(),
                submitted_ties: leaderboard_rules::tiebreak::Ties::none(),
                score: Score::new("score", 1).unwrap(),
                ties: leaderboard_rules::tiebreak::Ties::none(),
                previous_score: None,
                update_applied: true,
                updated_at: 0,
                last_match_id: MatchId::parse(m).unwrap(),
                previous_rank: None,
                attempt: None,
                review: None,
            },
            expires_at,
        }
    }

    fn row(receipts: Vec<KeptReceipt>, archived_until: Option<i64>) -> Row {
        Row {
            buckets: Vec::new(),
            standing: None,
            version: Some(1),
            rev: Some(1),
            receipts,
            archived_until,
        }
    }

    #[test]
    fn the_newest_stay_in_the_row_and_the_oldest_leave_it() {
        let r = row(
            (1..=4).rev().map(|i| kept(&format!("m{i}"), 100)).collect(),
            None,
        );
        let k = r.keep(kept("m5", 100), 10);
        let ids: Vec<String> = k.inline.iter().map(|k| k.match_id.to_string()).collect();
        assert_eq!(ids, ["m5", "m4", "m3", "m2"]);
        assert_eq!(k.archived, vec![kept("m1", 100)]);
        assert_eq!(k.archived_until, Some(100));
    }

    #[test]
    fn expired_receipts_are_dropped_not_archived() {
        let r = row(vec![kept("m2", 50), kept("m1", 5)], Some(7));
        let k = r.keep(kept("m3", 100), 10);
        assert_eq!(k.inline, vec![kept("m3", 100), kept("m2", 50)]);
        assert!(k.archived.is_empty());
        // The archive's last receipt expired: nothing to look up any more.
        assert_eq!(k.archived_until, None);
        assert!(!row(vec![], Some(7)).may_have_archived(10));
        assert!(row(vec![], Some(70)).may_have_archived(10));
    }

    #[test]
    fn a_row_from_before_kept_receipts_is_looked_up_until_its_receipts_expire() {
        let legacy = Row {
            rev: None,
            ..row(vec![], None)
        };
        assert!(legacy.may_have_archived(10));
        let k = legacy.keep(kept("m1", 100), 10);
        assert_eq!(k.archived_until, Some(100));
        assert!(!Row::default().may_have_archived(10));
    }

    #[test]
    fn the_row_finds_its_own_receipts() {
        let r = row(vec![kept("m2", 50), kept("m1", 50)], None);
        assert!(r.kept_receipt(&MatchId::parse("m1").unwrap()).is_some());
        assert!(r.kept_receipt(&MatchId::parse("m3").unwrap()).is_none());
    }
}
