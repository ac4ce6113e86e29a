//! Board management: standalone boards, board families, the board list and status
//! changes, plus the per-container caches of definitions.
//!
//! Policies never change after creation, so caching a definition is safe for ordering.
//! A status change reaches a warm container when its cached entry expires
//! (`BOARD_CACHE_TTL_MS`, default 1 s); time windows close by the clock, exactly.
//!
//! `board` (standalone boards), `family` (families and their windows' boards), `list`
//! (the board list), `rules` (integrity rules changed after creation), `rewards` (reward
//! tables changed after creation), `definitions`
//! (definitions cached per container).

mod board;
mod definitions;
mod family;
mod list;
mod rewards;
mod rules;

pub use board::{
    BoardView, CreateBoard, PatchBoard, ResetView, change_status, create_board, get_board,
    init_index, set_status,
};
pub use definitions::{BoardCache, FamilyCache};
pub use family::{
    CreateFamily, FamilyView, SeasonBody, SeasonView, create_family, family_board, get_family,
};
pub use list::{BoardList, DEFAULT_LIST_LIMIT, ListQuery, MAX_LIST_LIMIT, list_boards};
pub use rewards::{
    BoardRewardsChanged, FamilyRewardsChanged, RewardsBody, change_board_rewards,
    change_family_rewards,
};
pub use rules::{
    BoardRulesChanged, FamilyRulesChanged, RulesBody, change_board_rules, change_family_rules,
};

/// Whether a create made the resource or found it already there with the same settings.
#[derive(Debug, PartialEq, Eq)]
pub enum Created<T> {
    New(T),
    Existing(T),
}
