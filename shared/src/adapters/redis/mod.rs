//! `RedisRankIndex`: the rank index in Redis, one sorted set and one hash per board, plus
//! a marker that says whether the index holds the board completely and on which
//! replication history it was built.
//!
//! Modules: [`conn`] (topology, TLS, auth token), `link` (the connection, opened on
//! first use with bounded waits), `breaker` (the circuit breaker), `transport` (every
//! call: bounded, retried, grouped by slot), `lineage` (boards found on another
//! replication history), `keys` (key names), `codec` (value formats), `scripts` (the
//! Lua scripts, in `lua/`), `calls` (one type per script, building its keys and
//! arguments), `index` (the [`RankIndex`] operations), `rate_limit` (the
//! [`RateCounter`]), `seats` (tournaments' [`leaderboard_core::store::SeatHints`]).
//!
//! ## Integrity
//! Every script first checks the board's marker (`checked` in `lua/prelude.lua`): the
//! marker names the replication id (`master_replid`) of the node the index was built
//! on, and its size must equal both the sorted set's and the hash's. A restart (even
//! from the node's own snapshot), a promoted replica, a board whose keys moved to or
//! were split across nodes: each shows as a mismatch, and the script turns the marker
//! `stale` before answering. Reads of a board that is not `ok` fail with
//! [`IndexError::NotReady`] and are answered from DynamoDB instead; the use cases report
//! the board for repair, and a rebuild makes it `ok` again on the current history.
//!
//! ## Waits
//! Every call is one round trip bounded by the configured timeout, through a circuit
//! breaker. Opening the connection is shared by all callers and waited on at most
//! [`CONNECT_WAIT`] (or the call timeout if longer); a connection that cannot be opened
//! in that time opens the breaker at once. Operations over several boards or callers
//! send one pipeline per cluster slot, concurrently, never assuming one node.

mod breaker;
mod calls;
mod codec;
pub mod conn;
pub mod iam;
mod index;
mod keys;
mod lineage;
mod link;
mod live;
mod rate_limit;
mod scripts;
mod seats;
mod secret;
mod transport;
mod upkeep;

use std::time::Duration;

pub use breaker::{COOLDOWN as BREAKER_COOLDOWN, THRESHOLD as BREAKER_THRESHOLD};
pub use conn::{Access, Conn, Target, Topology};
pub use iam::IamAuth;
use keys::BoardKeys;
use leaderboard_core::store::IndexError;
#[cfg(doc)]
use leaderboard_core::store::{RankIndex, RateCounter};
use leaderboard_rules::ids::LeaderboardId;
use link::Link;
use scripts::Scripts;
pub use secret::SecretToken;

/// Entries per call of the rebuild's bulk load script.
const LOAD_CHUNK: usize = 1_000;
/// Standings per call of the batched apply script (bounds one script's run time).
const APPLY_CHUNK: usize = 500;
/// How long a call waits for the connection to open (when that is longer than the call
/// timeout): enough for TCP, TLS and AUTH on a cold container, short enough that a
/// silent Redis costs a request well under a second.
pub const CONNECT_WAIT: Duration = Duration::from_millis(250);
/// Every call's budget, when not configured.
pub(crate) const CALL_TIMEOUT: Duration = Duration::from_millis(50);
/// One attempt to open the connection, when not configured.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// The Redis adapter of [`RankIndex`].
pub struct RedisRankIndex {
    link: Link,
    prefix: String,
    timeout: Duration,
    breaker: breaker::Breaker,
    scripts: Scripts,
    /// The key prefix of players' card copies.
    card_prefix: String,
    /// The card prefix the read scripts take: the same on one node, where they read the
    /// rows' cards in the same call; empty on a cluster, where the cards live in other
    /// slots and are read in a second call.
    inline_cards: String,
}

/// How long a card copy stays unread before it expires (the next read fills it again
/// from DynamoDB).
pub(crate) const CARD_TTL: Duration = Duration::from_secs(86_400);

impl RedisRankIndex {
    /// Parses the URL (one node or, by its `+cluster` scheme or several hosts, a
    /// cluster); connects lazily on first use. `prefix` is prepended to every key (tests
    /// use it to isolate themselves); `timeout` bounds every call.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> Result<Self, IndexError> {
        Self::with_target(
            Target::parse(url, None)?,
            Access::default(),
            prefix,
            timeout,
            CONNECT_TIMEOUT,
        )
    }

    /// An index over `target`, authenticating and trusting roots as `access` says.
    pub fn with_target(
        target: Target,
        access: Access,
        prefix: &str,
        timeout: Duration,
        connect_timeout: Duration,
    ) -> Result<Self, IndexError> {
        let card_prefix = keys::card_prefix(prefix);
        let inline_cards = match target.topology {
            Topology::Single => card_prefix.clone(),
            Topology::Cluster => String::new(),
        };
        Ok(Self {
            link: Link::new(target, access, timeout, connect_timeout),
            prefix: prefix.to_owned(),
            card_prefix,
            inline_cards,
            timeout,
            breaker: breaker::Breaker::default(),
            scripts: Scripts::new(),
        })
    }

    /// This index without the rows' cards in the read scripts (for deployments that
    /// put no names on rows, `NAMES_ON_ROWS=false`).
    pub fn without_names(mut self) -> Self {
        self.inline_cards.clear();
        self
    }

    /// One node or a cluster.
    pub fn topology(&self) -> Topology {
        self.link.topology()
    }

    /// The live sorted-set and hash keys of a board.
    pub fn keys(&self, lb: &LeaderboardId) -> (String, String) {
        let k = self.board_keys(lb);
        (k.z, k.h)
    }

    /// The key of a board's distinct scores (for dense ranks).
    pub fn distinct_key(&self, lb: &LeaderboardId) -> String {
        self.board_keys(lb).d
    }

    /// The marker key of a board.
    pub fn marker_key(&self, lb: &LeaderboardId) -> String {
        self.board_keys(lb).m
    }

    fn board_keys(&self, lb: &LeaderboardId) -> BoardKeys {
        BoardKeys::new(&self.prefix, lb)
    }
}

/// Redis is not there (an I/O error, a refused or dropped connection, a timeout, a node
/// still loading its data set after a restart), as opposed to an answer that is an
/// error: waiting and trying again may help. A node answering LOADING is waited out as
/// a silent Redis is (the repair keeps its message, and the breaker counts it).
pub(crate) fn is_outage(e: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind as Server};
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.kind() == ErrorKind::Server(Server::BusyLoading)
}

/// The port's error for a Redis error, judged an outage or not here ([`is_outage`]).
pub(crate) fn index_error(e: redis::RedisError) -> IndexError {
    IndexError::Call {
        outage: is_outage(&e),
        source: Box::new(e),
    }
}

#[cfg(test)]
mod outage_tests {
    use redis::{ErrorKind, RedisError, ServerErrorKind};

    use super::index_error;

    #[test]
    fn a_node_loading_its_data_is_an_outage_and_an_error_reply_is_not() {
        let server = |kind| index_error(RedisError::from((ErrorKind::Server(kind), "")));
        assert!(server(ServerErrorKind::BusyLoading).is_outage());
        // A cluster mid-move or mid-failover: the client retries these itself.
        for kind in [
            ServerErrorKind::TryAgain,
            ServerErrorKind::ClusterDown,
            ServerErrorKind::ResponseError,
            ServerErrorKind::NoScript,
            ServerErrorKind::ReadOnly,
        ] {
            assert!(!server(kind).is_outage(), "{kind:?}");
        }
        assert!(!leaderboard_core::store::IndexError::Reply("odd".into()).is_outage());
    }
}
