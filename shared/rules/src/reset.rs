//! A board reset now (docs/operations.md, "Resetting a board"): the standings of that
//! moment sealed as a window of their own (results, every participant's history, the
//! `leaderboard.window.closed` event), and the board empty under the same id.
//!
//! A reset has a number (`n`, 1 for a board's first) and a fence: results are taken as
//! before until [`BoardReset::fence_at`], refused from it until the reset is done, and
//! taken on the emptied board after. The fence lies one definition-cache lifetime after
//! the request, so a container still holding the definition from before the request
//! has let it go by then: every result is decided before the fence (and archived) or
//! after the reset (and on the new board), never both. Its archive has an id of its
//! own, `{board}.reset-{n}`, which no board can be created with.

use serde::{Deserialize, Serialize};

use crate::error::DomainError;
use crate::ids::{LeaderboardId, is_archive_id};

/// The `Retry-After` of a result the board refuses while it is reset, in seconds.
pub const RETRY_AFTER_S: u64 = 2;

/// A board's latest reset, kept in its definition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardReset {
    /// 1 for the board's first reset, then 2, ...
    pub n: u32,
    /// When an operator asked for it, ms since the epoch.
    pub requested_at: i64,
    /// From this instant until the reset is done the board takes no result.
    pub fence_at: i64,
    /// Where the archived period began: the previous reset's fence, or the board's
    /// creation (its window's start).
    pub since: i64,
    /// Who asked, and why (the audit record says the same).
    pub actor: String,
    pub reason: String,
    /// When the board was emptied and takes results again; `None` while running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub done_at: Option<i64>,
}

impl BoardReset {
    /// The reset after `previous` (a board's first when `None`), asked for at `now` with
    /// its fence `fence_delay_ms` later. `start` is where a first reset's period began.
    pub fn after(
        previous: Option<&Self>,
        start: i64,
        now: i64,
        fence_delay_ms: i64,
        actor: String,
        reason: String,
    ) -> Self {
        Self {
            n: previous.map_or(1, |p| p.n + 1),
            requested_at: now,
            fence_at: now + fence_delay_ms.max(0),
            since: previous.map_or(start, |p| p.fence_at),
            actor,
            reason,
            done_at: None,
        }
    }

    /// Still emptying the board (or waiting for its fence).
    pub fn running(&self) -> bool {
        self.done_at.is_none()
    }

    /// Whether the board refuses results at `now` because of this reset.
    pub fn holds(&self, now: i64) -> bool {
        self.running() && now >= self.fence_at
    }

    /// Whether this may replace the board's stored reset: a new one follows a done one
    /// (or none, as the first), and a reset is done only while it runs. The store holds
    /// it as the write's condition, so of two resets asked at once one is stored.
    pub fn may_replace(&self, stored: Option<&Self>) -> bool {
        match (stored, self.running()) {
            (None, true) => self.n == 1,
            (Some(s), true) => !s.running() && s.n + 1 == self.n,
            (Some(s), false) => s.running() && s.n == self.n,
            (None, false) => false,
        }
    }

    /// The archive's window key: `reset-{n}`.
    pub fn window_key(&self) -> String {
        format!("reset-{}", self.n)
    }

    /// The archive's id: `{board}.reset-{n}`.
    pub fn archive_of(&self, lb: &LeaderboardId) -> LeaderboardId {
        LeaderboardId::archive(lb, self.n)
    }
}

/// Refuses a new board's id that names an archive (`crate::ids::is_archive_id`).
pub fn check_not_archive(lb: &LeaderboardId) -> Result<(), DomainError> {
    if is_archive_id(lb.as_str()) {
        return Err(DomainError::invalid(
            "leaderboard_id",
            "must not end with .reset-<number>, which names a reset's archive",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lb(raw: &str) -> LeaderboardId {
        LeaderboardId::parse(raw).unwrap()
    }

    #[test]
    fn resets_number_on_fence_after_the_cache_and_archive_the_period_since_the_last() {
        let first = BoardReset::after(None, 100, 5_000, 2_000, "op".into(), "exploit".into());
        assert_eq!((first.n, first.fence_at, first.since), (1, 7_000, 100));
        assert!(first.running() && !first.holds(6_999) && first.holds(7_000));
        let mut done = first.clone();
        done.done_at = Some(9_000);
        assert!(!done.holds(9_500), "a done reset holds nothing");
        let second = BoardReset::after(Some(&done), 100, 20_000, 2_000, "op".into(), "r".into());
        assert_eq!((second.n, second.since), (2, 7_000), "from the last fence");
        let board = lb("g1:duo:GLOBAL:ALL_TIME");
        let archive = second.archive_of(&board);
        assert_eq!(archive.as_str(), "g1:duo:GLOBAL:ALL_TIME.reset-2");
        assert_eq!(second.window_key(), "reset-2");
        assert!(first.may_replace(None) && !second.may_replace(None));
        assert!(second.may_replace(Some(&done)) && !second.may_replace(Some(&first)));
        let mut finished = second.clone();
        finished.done_at = Some(21_000);
        assert!(
            finished.may_replace(Some(&second)),
            "a running reset is done"
        );
        assert!(!finished.may_replace(Some(&finished)), "once");
        assert!(!done.may_replace(Some(&second)), "not another's");
        assert!(!first.may_replace(Some(&first)), "two firsts at once: one");
        assert!(is_archive_id(archive.as_str()));
        assert_eq!(LeaderboardId::parse(archive.as_str()).unwrap(), archive);
    }

    #[test]
    fn an_archives_id_is_kept_for_archives_even_past_a_boards_length() {
        for raw in ["a.reset-1", "g:m.reset-12"] {
            assert!(is_archive_id(raw), "{raw}");
            assert!(check_not_archive(&lb(raw)).is_err(), "{raw}");
        }
        for raw in ["a.reset-", "a.reset-1x", ".reset-1", "a-reset-1", "a.reset"] {
            assert!(!is_archive_id(raw), "{raw}");
        }
        let long = lb(&"x".repeat(crate::ids::MAX_ID_LEN));
        let archive = LeaderboardId::archive(&long, 3);
        assert_eq!(LeaderboardId::parse(archive.as_str()).unwrap(), archive);
        assert!(LeaderboardId::parse(&format!("{long}y")).is_err());
    }
}
