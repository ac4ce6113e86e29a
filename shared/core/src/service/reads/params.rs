//! The reads' parameters: `k`, `n`, `limit` with their bounds, and what a read about
//! one player names.

use crate::service::Context;
use crate::service::ServiceError;
use crate::store::{BoardStore, RateCounter};
use leaderboard_rules::board::Board;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::order::RankMode;
use leaderboard_rules::page::limit_within;

/// Neighbours on each side when `k` is not given.
pub const DEFAULT_K: u64 = 5;
/// Largest `k` accepted.
pub const MAX_K: u64 = 50;
/// Entries in a top read when `n` is not given.
pub const DEFAULT_N: u64 = 10;
/// Larger `n` are clamped to this.
pub const MAX_N: u64 = 1000;

/// Counts the read against the caller's rate limits; 429 `rate_limited` when over.
pub async fn admit<S, I: RateCounter>(
    ctx: &Context<S, I>,
    caller: &Caller,
) -> Result<(), ServiceError> {
    ctx.settings.rate_limits.check(&ctx.index, caller).await
}

/// The board a read of `lb` under `mode` is about, from the board cache (a read may
/// see a definition past its time, see [`crate::service::boards::BoardCache::get`]);
/// 422 `dense_ranks_not_kept` when the board keeps no dense ranks and `mode` asks for them.
pub(super) async fn board_for<S: BoardStore, I>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    mode: RankMode,
) -> Result<Board, ServiceError> {
    let board = ctx.boards.get(&ctx.store, lb).await?;
    board.serves(mode)?;
    Ok(board)
}

/// Parses `rank_mode` (`unique`, `competition` or `dense`; default `unique`).
pub fn parse_mode(raw: Option<&str>) -> Result<RankMode, DomainError> {
    RankMode::parse(raw)
}

/// Parses `k` (0..=50, default 5).
pub fn parse_k(raw: Option<&str>) -> Result<u64, DomainError> {
    let Some(raw) = raw else { return Ok(DEFAULT_K) };
    match raw.parse::<u64>() {
        Ok(k) if k <= MAX_K => Ok(k),
        _ => Err(DomainError::invalid(
            "k",
            format!("must be an integer from 0 to {MAX_K}"),
        )),
    }
}

/// Parses `n` (at least 1, default 10, clamped to 1000).
pub fn parse_n(raw: Option<&str>) -> Result<u64, DomainError> {
    let Some(raw) = raw else { return Ok(DEFAULT_N) };
    match raw.parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n.min(MAX_N)),
        // Digits too long for u64 are still a valid, very large n.
        Err(_) if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) => Ok(MAX_N),
        _ => Err(DomainError::invalid(
            "n",
            "must be an integer of at least 1",
        )),
    }
}

/// Default and largest page of `GET /leaderboards/{lb}/ranks`.
pub const DEFAULT_PAGE: u64 = 100;
pub const MAX_PAGE: u64 = 1000;

/// Largest `from_rank` accepted (a board never holds more players than this).
pub const MAX_FROM_RANK: u64 = 1 << 53;

/// Where a `ranks` read starts: `from_rank` (1..=2^53) or `cursor`, not both; the top
/// when neither is given.
pub fn parse_start<'a>(
    from_rank: Option<&str>,
    cursor: Option<&'a str>,
) -> Result<super::PageStart<'a>, DomainError> {
    match (from_rank, cursor) {
        (Some(_), Some(_)) => Err(DomainError::invalid(
            "from_rank",
            "cannot be given with cursor (a cursor already says where the page starts)",
        )),
        (None, Some("")) => Err(DomainError::InvalidCursor),
        (None, Some(c)) => Ok(super::PageStart::Cursor(c)),
        (None, None) => Ok(super::PageStart::Top),
        (Some(raw), None) => match raw.parse::<u64>() {
            Ok(r) if (1..=MAX_FROM_RANK).contains(&r) => Ok(super::PageStart::Rank(r)),
            _ => Err(DomainError::invalid(
                "from_rank",
                format!("must be an integer from 1 to {MAX_FROM_RANK}"),
            )),
        },
    }
}

/// Parses `limit` (1..=1000, default 100).
pub fn parse_limit(raw: Option<&str>) -> Result<u64, DomainError> {
    limit_within(raw, DEFAULT_PAGE, MAX_PAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_and_n_bounds() {
        assert_eq!(parse_k(None).unwrap(), DEFAULT_K);
        assert_eq!(parse_k(Some("50")).unwrap(), 50);
        assert!(parse_k(Some("51")).is_err());
        assert!(parse_k(Some("-1")).is_err());
        assert_eq!(parse_n(Some("5000")).unwrap(), MAX_N);
        assert_eq!(parse_n(Some("99999999999999999999999")).unwrap(), MAX_N);
        assert!(parse_n(Some("0")).is_err());
        assert!(parse_n(Some("x")).is_err());
    }

    #[test]
    fn a_page_starts_at_the_top_a_rank_or_a_cursor_never_two_or_an_empty_one() {
        use super::super::PageStart;
        assert!(matches!(parse_start(None, None), Ok(PageStart::Top)));
        assert!(matches!(
            parse_start(Some("7"), None),
            Ok(PageStart::Rank(7))
        ));
        assert!(matches!(
            parse_start(None, Some("c")),
            Ok(PageStart::Cursor("c"))
        ));
        assert!(matches!(
            parse_start(None, Some("")),
            Err(DomainError::InvalidCursor)
        ));
        assert!(parse_start(Some("7"), Some("c")).is_err());
        assert!(parse_start(Some("0"), None).is_err());
    }
}
