//! Every key format of the table, in one place (the module doc of `dynamodb` has the
//! table of items). Ids cannot contain `#` (see [`leaderboard_rules::ids`]), so keys are
//! unambiguous.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use leaderboard_rules::ids::{LeaderboardId, MatchId, PlayerId};
use leaderboard_rules::window::Period;

/// Number of write shards per board.
pub const SHARDS: u64 = 16;

/// One item's attributes.
pub(super) type Item = HashMap<String, AttributeValue>;

/// Partition of the board list.
pub(super) const LIST_PK: &str = "BL";

/// Partition of the list of families (each a copy of its definition, which never
/// changes): `FL`, `{game}#{mode}`.
pub(super) const FAMILY_LIST_PK: &str = "FL";

/// Partition of the audit trail.
pub(super) const AUDIT_PK: &str = "AU";

/// FNV-1a: a stable hash, so a player's shard never changes between releases.
pub(super) fn shard_of(player: &str) -> u64 {
    let hash = player.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % SHARDS
}

pub(super) fn key(pk: String, sk: String) -> Item {
    HashMap::from([
        ("pk".into(), AttributeValue::S(pk)),
        ("sk".into(), AttributeValue::S(sk)),
    ])
}

pub(super) fn board_key(lb: &LeaderboardId) -> Item {
    key(format!("B#{lb}"), "BOARD".into())
}

/// The partition of a player's standing on a board: `S#{board}#{shard}`.
pub(super) fn standing_partition(lb: &LeaderboardId, player: &PlayerId) -> String {
    shard_partition(lb, shard_of(player.as_str()))
}

/// The partition of one write shard of a board's standings: `S#{board}#{shard:02}`.
pub fn shard_partition(lb: &LeaderboardId, shard: u64) -> String {
    format!("S#{lb}#{shard:02}")
}

pub(super) fn standing_key(lb: &LeaderboardId, player: &PlayerId) -> Item {
    key(standing_partition(lb, player), player.to_string())
}

pub(super) fn receipt_key(lb: &LeaderboardId, player: &PlayerId, m: &MatchId) -> Item {
    let (pk, sk) = receipt_pk_sk(lb, player, m);
    key(pk, sk)
}

/// A receipt's `pk` and `sk`: `R#{board}#{player}`, `M#{match}`.
pub(super) fn receipt_pk_sk(
    lb: &LeaderboardId,
    player: &PlayerId,
    m: &MatchId,
) -> (String, String) {
    (receipts_partition(lb, player), format!("M#{m}"))
}

/// The partition of a player's receipts on a board: `R#{board}#{player}`.
pub(super) fn receipts_partition(lb: &LeaderboardId, player: &PlayerId) -> String {
    format!("R#{lb}#{player}")
}

/// The partition of a game's bans: `BAN#{game}`.
pub(super) fn bans_partition(game: &str) -> String {
    format!("BAN#{game}")
}

/// A ban's `pk` and `sk`: `BAN#{game}`, `{player}`.
pub(super) fn ban_pk_sk(game: &str, player: &PlayerId) -> (String, String) {
    (bans_partition(game), player.to_string())
}

/// The copy of a ban under its player: `PB#{player}`, `{game}`.
pub(super) fn player_ban_pk_sk(player: &PlayerId, game: &str) -> (String, String) {
    (format!("PB#{player}"), game.to_owned())
}

/// A family's `pk` and `sk`: `F#{game}#{mode}`, `FAMILY`.
pub(super) fn family_pk_sk(game: &str, mode: &str) -> (String, String) {
    (format!("F#{game}#{mode}"), "FAMILY".to_owned())
}

/// A rebuild checkpoint's `pk` and `sk`: `RB#{board}`, `REBUILD`.
pub(super) fn checkpoint_pk_sk(lb: &LeaderboardId) -> (String, String) {
    (format!("RB#{lb}"), "REBUILD".to_owned())
}

/// A seal's progress: `SEAL#{board}`, `SEAL`.
pub(super) fn seal_pk_sk(lb: &LeaderboardId) -> (String, String) {
    (format!("SEAL#{lb}"), "SEAL".to_owned())
}

/// A board's exports: `EXP#{board}` (sorted by export id).
pub(super) fn export_partition(lb: &LeaderboardId) -> String {
    format!("EXP#{lb}")
}

/// A sealed board's results: `RES#{board}`, `RESULTS`.
pub(super) fn results_pk_sk(lb: &LeaderboardId) -> (String, String) {
    (format!("RES#{lb}"), "RESULTS".to_owned())
}

/// The partition of a player's history: `H#{player}`.
pub(super) fn history_partition(player: &PlayerId) -> String {
    format!("H#{player}")
}

/// The first part of a history row's sort key, shared by one family, scope and
/// period: `{game}#{mode}#{scope}#{PERIOD}#`.
pub(super) fn history_prefix(game: &str, mode: &str, scope: &str, period: Period) -> String {
    format!("{game}#{mode}#{scope}#{}#", period.as_str())
}

/// A history row's sort key: the prefix and the window's end (13 digits, so rows sort
/// by time).
pub(super) fn history_sk(prefix: &str, end: i64) -> String {
    format!("{prefix}{end:013}")
}

/// The partition of an event source's mappings: `MAP#{source}`.
pub(super) fn mapping_partition(source: &str) -> String {
    format!("MAP#{source}")
}

/// One version of a mapping: `V{version, 10 digits}` (versions sort in order).
pub(super) fn mapping_sk(version: u64) -> String {
    format!("V{version:010}")
}

/// A player's rewards: `RW#{player}` (sorted by reward id).
pub(super) fn reward_partition(player: &PlayerId) -> String {
    format!("RW#{player}")
}

/// A player's profile: `P#{player}`, `PROFILE`.
pub(super) fn profile_pk_sk(player: &PlayerId) -> (String, String) {
    (format!("P#{player}"), "PROFILE".to_owned())
}

/// A tournament's definition: `TD`, `{tournament}` (one partition: definitions are few
/// and read through a cache).
pub(super) const TOURNAMENTS_PK: &str = "TD";

/// A player's membership of an occurrence: `TJ#{occurrence}#{shard}`, `{player}`
/// (sharded like standings, so a burst of joins spreads over partitions).
pub(super) fn member_pk_sk(occ: &LeaderboardId, player: &PlayerId) -> (String, String) {
    (
        format!("TJ#{occ}#{:02}", shard_of(player.as_str())),
        player.to_string(),
    )
}

/// The partition of the occurrence's seats `seat % SHARDS`: `TS#{occurrence}#{shard}`.
pub(super) fn seat_partition(occ: &LeaderboardId, shard: u64) -> String {
    format!("TS#{occ}#{shard:02}")
}

/// A seat of an occurrence: its shard's partition, the seat number (20 digits, so a
/// partition's seats sort by number).
pub(super) fn seat_pk_sk(occ: &LeaderboardId, seat: u64) -> (String, String) {
    (seat_partition(occ, seat % SHARDS), format!("{seat:020}"))
}

/// An occurrence's seat counter, used while the seat hints are away:
/// `TC#{occurrence}`, `COUNTER`.
pub(super) fn seat_counter_pk_sk(occ: &LeaderboardId) -> (String, String) {
    (format!("TC#{occ}"), "COUNTER".to_owned())
}

/// A player's standing in a tournament's league: `TL#{tournament}#{shard}`, `{player}`
/// (sharded like memberships: a seal writes a whole league's at once).
pub(super) fn league_pk_sk(tournament: &str, player: &PlayerId) -> (String, String) {
    (
        format!("TL#{tournament}#{:02}", shard_of(player.as_str())),
        player.to_string(),
    )
}

/// A rank sketch's `pk` and `sk`: `RS#{board}`, `SKETCH`.
pub(super) fn sketch_pk_sk(lb: &LeaderboardId) -> (String, String) {
    (format!("RS#{lb}"), "SKETCH".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_stable_and_spread() {
        assert_eq!(shard_of("alice"), shard_of("alice"));
        let used: std::collections::HashSet<u64> =
            (0..1000).map(|i| shard_of(&format!("p{i}"))).collect();
        assert_eq!(used.len() as u64, SHARDS);
    }
}
