//! [`LiveViews`] over Redis, beside the board's index keys (same hash tag): a sorted set
//! of the watched views, one key per view for its last push and one for its push gate.

use std::time::Duration;

use tracing::instrument;

use super::RedisRankIndex;
use super::calls::{LiveBoard, LiveClaim, LiveClaimReply, LiveWatch, LiveWatched};
use super::codec::reply_err;
use super::keys::{LiveKeys, live_boards};
use leaderboard_core::store::IndexError;
use leaderboard_core::store::{Claim, LiveViews};
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::live::Published;
use leaderboard_rules::order::{BoardOrder, Direction};

/// How long a view's last push is kept after it (a view unwatched for a day starts over).
const STATE_TTL_MS: u64 = 86_400_000;

impl RedisRankIndex {
    fn live_keys(&self, lb: &LeaderboardId, view: &str) -> LiveKeys {
        LiveKeys::new(&self.prefix, lb, view)
    }
}

/// A board's member in the registry of watched boards: its direction, then its id.
fn registered(lb: &LeaderboardId, dir: Direction) -> String {
    let d = match dir {
        Direction::Desc => 'd',
        Direction::Asc => 'a',
    };
    format!("{d}:{lb}")
}

/// The board a registry member names (`None`: not one this code wrote).
fn unregistered(member: &str) -> Option<(LeaderboardId, Direction)> {
    let (d, lb) = member.split_once(':')?;
    let dir = match d {
        "d" => Direction::Desc,
        "a" => Direction::Asc,
        _ => return None,
    };
    Some((LeaderboardId::parse(lb).ok()?, dir))
}

fn decode(raw: Option<String>) -> Result<Option<Published>, IndexError> {
    raw.map(|s| serde_json::from_str(&s).map_err(|_| reply_err("live view state")))
        .transpose()
}

impl LiveViews for RedisRankIndex {
    #[instrument(skip(self))]
    async fn watch(
        &self,
        on: BoardOrder<'_>,
        view_id: &str,
        until_ms: i64,
    ) -> Result<(), IndexError> {
        let BoardOrder { lb, dir } = on;
        let keys = self.live_keys(lb, view_id);
        let call = LiveWatch {
            keys: &keys,
            view: view_id,
            until_ms,
        };
        // The registry lives in a slot of its own on a cluster: a second call, at once.
        let registry = live_boards(&self.prefix);
        let board = registered(lb, dir);
        let listed = LiveBoard {
            registry: &registry,
            board: &board,
            until_ms,
            now_ms: leaderboard_rules::time::now_ms(),
        };
        let (_, _): (u8, u8) = futures::try_join!(self.run(&call), self.run(&listed))?;
        Ok(())
    }

    #[instrument(skip(self))]
    async fn watched_boards(
        &self,
        now_ms: i64,
    ) -> Result<Vec<(LeaderboardId, Direction)>, IndexError> {
        let members: Vec<String> = self
            .command(
                redis::cmd("ZRANGE")
                    .arg(live_boards(&self.prefix))
                    .arg(now_ms)
                    .arg("+inf")
                    .arg("BYSCORE"),
            )
            .await?;
        Ok(members.iter().filter_map(|m| unregistered(m)).collect())
    }

    #[instrument(skip(self))]
    async fn watched(&self, lb: &LeaderboardId, now_ms: i64) -> Result<Vec<String>, IndexError> {
        let keys = self.live_keys(lb, "");
        self.run(&LiveWatched {
            keys: &keys,
            now_ms,
        })
        .await
    }

    #[instrument(skip(self))]
    async fn last_push(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
    ) -> Result<Option<Published>, IndexError> {
        let keys = self.live_keys(lb, view_id);
        decode(self.command(redis::cmd("GET").arg(&keys.state)).await?)
    }

    #[instrument(skip(self))]
    async fn claim(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        gap: Duration,
    ) -> Result<Claim, IndexError> {
        let keys = self.live_keys(lb, view_id);
        let call = LiveClaim {
            keys: &keys,
            gap_ms: gap.as_millis().max(1) as u64,
        };
        let reply: LiveClaimReply = self.run(&call).await?;
        Ok(match reply.wait_ms {
            0 => Claim::Granted(decode(reply.state)?),
            ms => Claim::Wait(Duration::from_millis(ms)),
        })
    }

    #[instrument(skip(self, push), fields(version = push.version))]
    async fn record(
        &self,
        lb: &LeaderboardId,
        view_id: &str,
        push: &Published,
    ) -> Result<(), IndexError> {
        let keys = self.live_keys(lb, view_id);
        let body = serde_json::to_string(push).map_err(|_| reply_err("live view state"))?;
        self.command::<()>(
            redis::cmd("SET")
                .arg(&keys.state)
                .arg(body)
                .arg("PX")
                .arg(STATE_TTL_MS),
        )
        .await
    }

    #[instrument(skip(self))]
    async fn release(&self, lb: &LeaderboardId, view_id: &str) -> Result<(), IndexError> {
        let keys = self.live_keys(lb, view_id);
        self.command::<()>(redis::cmd("DEL").arg(&keys.gate)).await
    }
}
