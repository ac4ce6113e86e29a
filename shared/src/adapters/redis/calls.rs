//! One type per script: each builds its script's KEYS and ARGV in the order the `.lua`
//! file's named locals take them (the file's first lines), so that order is written
//! once on each side.

use redis::{FromRedisValue, ParsingError, Script, ScriptInvocation, Value};

use super::codec::{Flat, RawCards, RawMetadata};
use super::keys::{BoardKeys, LiveKeys, SeatKeys};
use super::scripts::Scripts;
use leaderboard_core::store::PageAt;
use leaderboard_core::store::{EntryKind, IndexEntry, TOP_WINDOW};
use leaderboard_rules::order::{Direction, RankMode};

/// A call of one script.
pub(crate) trait Call {
    /// The script it runs.
    fn script(scripts: &Scripts) -> &Script;
    /// Its keys and arguments.
    fn build(&self, inv: &mut ScriptInvocation<'_>);

    /// The invocation, ready to send.
    fn invocation<'s>(&self, scripts: &'s Scripts) -> ScriptInvocation<'s>
    where
        Self: Sized,
    {
        let mut inv = Self::script(scripts).prepare_invoke();
        self.build(&mut inv);
        inv
    }
}

/// Declares a call type: its script field, and how it builds KEYS and ARGV.
macro_rules! call {
    ($(#[$doc:meta])* $name:ident<$lt:lifetime> { $($field:ident: $ty:ty),* $(,)? }
     => $script:ident, |$me:ident, $inv:ident| $build:block) => {
        $(#[$doc])*
        pub(crate) struct $name<$lt> {
            $(pub $field: $ty),*
        }

        impl Call for $name<'_> {
            fn script(scripts: &Scripts) -> &Script {
                &scripts.$script
            }

            fn build(&self, $inv: &mut ScriptInvocation<'_>) {
                let $me = self;
                $build
            }
        }
    };
}

/// Declares what a script answers: its fields named, in the order the script returns
/// them, decoded from the array it is (that order written once, beside its call).
macro_rules! reply {
    ($(#[$doc:meta])* $name:ident { $($(#[$fdoc:meta])* $field:ident: $ty:ty),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub(super) struct $name {
            $($(#[$fdoc])* pub $field: $ty),*
        }

        impl FromRedisValue for $name {
            fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
                let ($($field,)*) = FromRedisValue::from_redis_value(v)?;
                Ok(Self { $($field),* })
            }
        }
    };
}

/// A yes/no argument as the scripts read it.
fn flag(yes: bool) -> &'static str {
    if yes { "1" } else { "0" }
}

/// The four arguments every script takes per change: player, version, zscore, member
/// (for a removal or an erasure an empty zscore and `removed` or `erased`).
/// A member with the standing's metadata after the record separator (see `prelude.lua`).
fn with_metadata(member: String, md: Option<&leaderboard_rules::profile::Metadata>) -> String {
    match md {
        Some(md) => format!("{member}\u{1e}{}", md.as_str()),
        None => member,
    }
}

fn standing(inv: &mut ScriptInvocation<'_>, e: &IndexEntry) {
    inv.arg(&e.key.player).arg(e.version);
    match e.kind {
        EntryKind::Standing => inv
            .arg(e.key.zscore(e.direction))
            .arg(with_metadata(e.key.member(), e.metadata.as_ref())),
        EntryKind::Removed => inv.arg("").arg("removed"),
        EntryKind::Erased => inv.arg("").arg("erased"),
    };
}

/// A board's live keys as the reads take them: z, h, m.
fn read_keys(inv: &mut ScriptInvocation<'_>, k: &BoardKeys) {
    inv.key(&k.z).key(&k.h).key(&k.m);
}

/// Every live and rebuild key of a board, as the applies and the swap take them: z, h,
/// m, tz, th, tv, d, td, x.
fn write_keys(inv: &mut ScriptInvocation<'_>, k: &BoardKeys) {
    read_keys(inv, k);
    inv.key(&k.tz)
        .key(&k.th)
        .key(&k.tv)
        .key(&k.d)
        .key(&k.td)
        .key(&k.x);
}

call! {
    /// `apply.lua`: one standing, with the player's rank and the board's size back
    /// ([`Applied`]).
    Apply<'a> { keys: &'a BoardKeys, entry: &'a IndexEntry } => apply, |c, inv| {
        write_keys(inv, c.keys);
        standing(inv, c.entry);
        inv.arg("1").arg(c.entry.expire_at.unwrap_or(0)).arg(TOP_WINDOW);
    }
}

/// What `apply.lua` answers: `{applied, state, rank, size}`, or `{applied, state}` when
/// the player is not on the board after it (the change lost to a newer removal's
/// tombstone, or removed them).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Applied {
    pub applied: bool,
    /// The board's marker state (`codec::health_of`).
    pub state: String,
    /// The player's 0-based rank and the board's size, when the player is on it.
    pub place: Option<(u64, u64)>,
}

impl FromRedisValue for Applied {
    fn from_redis_value(v: Value) -> Result<Self, ParsingError> {
        let items: Vec<Value> = redis::from_redis_value(v)?;
        let (applied, state, place) = match items.as_slice() {
            [applied, state] => (applied, state, None),
            [applied, state, rank, size] => (applied, state, Some((rank, size))),
            other => {
                return Err(
                    format!("apply.lua answered {} values, not 2 or 4", other.len()).into(),
                );
            }
        };
        let place = place
            .map(|(rank, size)| {
                Ok::<_, ParsingError>((
                    u64::from_redis_value_ref(rank)?,
                    u64::from_redis_value_ref(size)?,
                ))
            })
            .transpose()?;
        Ok(Self {
            applied: u8::from_redis_value_ref(applied)? == 1,
            state: String::from_redis_value_ref(state)?,
            place,
        })
    }
}

call! {
    /// `apply_many.lua`: many standings of one board, in stream order.
    ApplyMany<'a> { keys: &'a BoardKeys, entries: Vec<&'a IndexEntry>, expire_at: Option<i64> }
    => apply_many, |c, inv| {
        write_keys(inv, c.keys);
        inv.arg(TOP_WINDOW).arg(c.expire_at.unwrap_or(0));
        for e in &c.entries {
            standing(inv, e);
        }
    }
}

call! {
    /// `around.lua`: a player's rank and `k` neighbours on each side.
    Around<'a> { keys: &'a BoardKeys, player: &'a str, k: u64, mode: RankMode, cards: &'a str } => around, |c, inv| {
        read_keys(inv, c.keys);
        inv.key(&c.keys.d).arg(c.player).arg(c.k).arg(c.mode.as_str()).arg(c.cards);
    }
}

reply! {
    /// What `around.lua` answers.
    AroundReply {
        /// The board's marker state (`codec::ready`).
        state: String,
        /// The player's 0-based rank, -1 when they are not on the board.
        rank: i64,
        total: u64,
        /// The 0-based rank of the first entry.
        first: u64,
        entries: Flat,
        /// The first entry's place under the mode asked.
        first_place: u64,
        cards: RawCards,
        metadata: RawMetadata,
    }
}

call! {
    /// `top.lua`: the best `n`.
    Top<'a> { keys: &'a BoardKeys, n: u64, cards: &'a str } => top, |c, inv| {
        read_keys(inv, c.keys);
        inv.arg(c.n).arg(c.cards);
    }
}

reply! {
    /// What `top.lua` answers.
    TopReply { state: String, entries: Flat, total: u64, cards: RawCards, metadata: RawMetadata }
}

call! {
    /// `page.lua`: a page from the top, after or before a key, or from a rank.
    Page<'a> {
        keys: &'a BoardKeys, dir: Direction, at: PageAt<'a>, limit: u64, mode: RankMode,
        cards: &'a str,
    } => page, |c, inv| {
        read_keys(inv, c.keys);
        inv.key(&c.keys.d);
        match c.at {
            PageAt::Top => inv.arg("top").arg(0).arg("").arg(0),
            PageAt::After(k) => inv.arg("after").arg(k.zscore(c.dir)).arg(k.member()).arg(0),
            PageAt::Before(k) => inv.arg("before").arg(k.zscore(c.dir)).arg(k.member()).arg(0),
            PageAt::Rank(r) => inv.arg("at").arg(0).arg("").arg(r),
        };
        inv.arg(c.limit).arg(c.mode.as_str()).arg(c.cards);
    }
}

reply! {
    /// What `page.lua` answers.
    PageReply {
        state: String,
        /// Entries before the first (its 0-based rank).
        before: u64,
        total: u64,
        entries: Flat,
        first_place: u64,
        /// Per entry, when it took its place (µs on the index's clock).
        stamps: Vec<i64>,
        clock: i64,
        cards: RawCards,
        metadata: RawMetadata,
    }
}

call! {
    /// `entries.lua`: the rows of some players.
    Entries<'a> {
        keys: &'a BoardKeys, players: &'a [leaderboard_rules::ids::PlayerId], mode: RankMode, cards: &'a str,
    } => entries, |c, inv| {
        read_keys(inv, c.keys);
        inv.key(&c.keys.d).arg(c.mode.as_str()).arg(c.cards);
        for p in c.players {
            inv.arg(p.as_str());
        }
    }
}

reply! {
    /// One row of `entries.lua`'s answer.
    EntryRow { player: String, rank0: u64, place: u64, member: String, zscore: String }
}

reply! {
    /// What `entries.lua` answers: the rows of the players on the board, in the order asked.
    EntriesReply { state: String, total: u64, rows: Vec<EntryRow>, cards: RawCards, metadata: RawMetadata }
}

call! {
    /// `keys_of.lua`: the hash values of some players.
    KeysOf<'a> { keys: &'a BoardKeys, players: &'a [leaderboard_rules::ids::PlayerId] } => keys_of, |c, inv| {
        read_keys(inv, c.keys);
        for p in c.players {
            inv.arg(p.as_str());
        }
    }
}

reply! {
    /// What `keys_of.lua` answers: per player, their hash value (nil: not on the board).
    KeysOfReply { state: String, values: Vec<Option<String>> }
}

call! {
    /// `top_window.lua`: the top window for a reader holding version `known`.
    TopWindow<'a> { keys: &'a BoardKeys, known: &'a str, named: u64, cards: &'a str, held: bool } => top_window, |c, inv| {
        read_keys(inv, c.keys);
        inv.key(&c.keys.tv).arg(c.known).arg(TOP_WINDOW).arg(c.named).arg(c.cards).arg(u8::from(c.held));
    }
}

reply! {
    /// What `top_window.lua` answers; `entries` is nil while the reader's version is
    /// current.
    TopWindowReply {
        state: String,
        version: String,
        total: u64,
        entries: Option<Flat>,
        clock: i64,
        cards: RawCards,
        metadata: RawMetadata,
    }
}

call! {
    /// `cards.lua`: the card copies under `keys` (one slot's, on a cluster).
    Cards<'a> { keys: &'a [String] } => cards, |c, inv| {
        for k in c.keys {
            inv.key(k);
        }
    }
}

call! {
    /// `card_put.lua`: a card copy kept unless the one held is as new.
    CardPut<'a> { key: &'a str, version: u64, card: &'a str, ttl_s: u64 } => card_put, |c, inv| {
        inv.key(c.key).arg(c.version).arg(c.card).arg(c.ttl_s);
    }
}

call! {
    /// `sketch.lua`: marks at evenly spaced ranks.
    Sketch<'a> { keys: &'a BoardKeys, marks: u64, min_size: u64 } => sketch, |c, inv| {
        read_keys(inv, c.keys);
        inv.arg(c.marks).arg(c.min_size);
    }
}

reply! {
    /// What `sketch.lua` answers: the board's size, and the marks' 0-based ranks with
    /// their entries.
    SketchReply { state: String, total: u64, ranks: Vec<u64>, entries: Flat }
}

call! {
    /// `health.lua`: the board's checked state.
    Health<'a> { keys: &'a BoardKeys } => health, |c, inv| {
        read_keys(inv, c.keys);
    }
}

call! {
    /// `init.lua`: a new board's marker.
    Init<'a> { keys: &'a BoardKeys, expire_at: Option<i64>, dense_ranks: bool } => init, |c, inv| {
        inv.key(&c.keys.m).key(&c.keys.z).key(&c.keys.h).key(&c.keys.d);
        inv.arg(c.expire_at.unwrap_or(0)).arg(flag(c.dense_ranks));
    }
}

call! {
    /// `mark_stale.lua`: a board not to be trusted.
    MarkStale<'a> { keys: &'a BoardKeys } => mark_stale, |c, inv| {
        inv.key(&c.keys.m);
    }
}

call! {
    /// `settle.lua`: a board found on another replication history, adopted or stale.
    Settle<'a> { keys: &'a BoardKeys, from: &'a str, adopt: bool } => settle, |c, inv| {
        read_keys(inv, c.keys);
        inv.arg(c.from).arg(if c.adopt { "1" } else { "0" });
    }
}

call! {
    /// `begin.lua`: a rebuild started or resumed under `gen_id`.
    Begin<'a> { keys: &'a BoardKeys, gen_id: &'a str, fresh: bool, dense_ranks: bool } => begin, |c, inv| {
        inv.key(&c.keys.m).key(&c.keys.tz).key(&c.keys.th).key(&c.keys.td);
        inv.arg(c.gen_id).arg(flag(c.fresh)).arg(flag(c.dense_ranks));
    }
}

call! {
    /// `load.lua`: snapshot entries into the rebuild's keys (players distinct).
    Load<'a> { keys: &'a BoardKeys, entries: &'a [&'a IndexEntry] } => load, |c, inv| {
        inv.key(&c.keys.tz).key(&c.keys.th).key(&c.keys.td).key(&c.keys.x).key(&c.keys.m);
        for e in c.entries {
            standing(inv, e);
        }
    }
}

call! {
    /// `finish.lua`: the rebuilt keys swapped in.
    Finish<'a> { keys: &'a BoardKeys, gen_id: &'a str, expire_at: Option<i64> } => finish, |c, inv| {
        write_keys(inv, c.keys);
        inv.arg(c.gen_id).arg(c.expire_at.unwrap_or(0));
    }
}

call! {
    /// `lease.lua`: the board's rebuild lease taken or renewed.
    Lease<'a> { keys: &'a BoardKeys, owner: &'a str, ttl_ms: u64 } => lease, |c, inv| {
        inv.key(&c.keys.lease).arg(c.owner).arg(c.ttl_ms);
    }
}

call! {
    /// `release.lua`: the lease given back.
    Release<'a> { keys: &'a BoardKeys, owner: &'a str } => release, |c, inv| {
        inv.key(&c.keys.lease).arg(c.owner);
    }
}

call! {
    /// `hit.lua`: one hit on a rate-limit counter.
    Hit<'a> { counter: &'a str, window_ms: u64 } => hit, |c, inv| {
        inv.key(c.counter).arg(c.window_ms);
    }
}

call! {
    /// `seat.lua`: the next seat of an occurrence to try.
    Seat<'a> { keys: &'a SeatKeys, floor: u64, expire_at: i64 } => seat, |c, inv| {
        inv.key(&c.keys.counter).key(&c.keys.given).arg(c.floor).arg(c.expire_at);
    }
}

call! {
    /// `seat_back.lua`: a seat given back.
    SeatBack<'a> { keys: &'a SeatKeys, seat: u64, expire_at: i64 } => seat_back, |c, inv| {
        inv.key(&c.keys.given).arg(c.seat).arg(c.expire_at);
    }
}

call! {
    /// `live_watch.lua`: a live view watched until a time.
    LiveWatch<'a> { keys: &'a LiveKeys, view: &'a str, until_ms: i64 } => live_watch, |c, inv| {
        inv.key(&c.keys.watched).arg(c.view).arg(c.until_ms);
    }
}

call! {
    /// `live_board.lua`: a board in the registry of watched boards until `until_ms`.
    LiveBoard<'a> { registry: &'a str, board: &'a str, until_ms: i64, now_ms: i64 } => live_board, |c, inv| {
        inv.key(c.registry).arg(c.board).arg(c.until_ms).arg(c.now_ms);
    }
}

call! {
    /// `live_watched.lua`: the views of a board watched now.
    LiveWatched<'a> { keys: &'a LiveKeys, now_ms: i64 } => live_watched, |c, inv| {
        inv.key(&c.keys.watched).arg(c.now_ms);
    }
}

call! {
    /// `live_claim.lua`: a view's push gate, and its last push.
    LiveClaim<'a> { keys: &'a LiveKeys, gap_ms: u64 } => live_claim, |c, inv| {
        inv.key(&c.keys.gate).key(&c.keys.state).arg(c.gap_ms);
    }
}

reply! {
    /// What `live_claim.lua` answers: 0 and the view's state when the claim is granted,
    /// else how long to wait (ms) and nil.
    LiveClaimReply { wait_ms: u64, state: Option<String> }
}

#[cfg(test)]
mod tests {
    use redis::Value;

    use super::*;

    #[test]
    fn apply_answers_a_place_only_for_a_player_on_the_board() {
        let int = Value::Int;
        let state = || Value::BulkString(b"ok".to_vec());
        let on = Value::Array(vec![int(1), state(), int(4), int(9)]);
        assert_eq!(
            redis::from_redis_value::<Applied>(on).unwrap(),
            Applied {
                applied: true,
                state: "ok".into(),
                place: Some((4, 9))
            }
        );
        // Behind a newer removal's tombstone: not applied, and not on the board.
        let off = Value::Array(vec![int(0), state()]);
        let off = redis::from_redis_value::<Applied>(off).unwrap();
        assert_eq!((off.applied, off.place), (false, None));
        let odd = Value::Array(vec![int(0), state(), int(1)]);
        assert!(redis::from_redis_value::<Applied>(odd).is_err());
    }
}
