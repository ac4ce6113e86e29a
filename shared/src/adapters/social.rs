//! `HttpFriendsSource`: the social graph over HTTP, `GET {base}/players/{p}/friends`
//! answering a JSON list of player ids. Locally that is the stand-in in `infra/local`; in
//! AWS it is the studio's social service at `SOCIAL_GRAPH_URL`.

use std::time::Duration;

use tracing::{instrument, warn};

use leaderboard_core::store::FriendsError;
use leaderboard_core::store::FriendsSource;
use leaderboard_rules::ids::PlayerId;

/// Most friends considered for one read; a longer list is cut (and logged).
pub(crate) const MAX_FRIENDS: usize = 2000;

/// The HTTP adapter of [`FriendsSource`].
pub struct HttpFriendsSource {
    http: reqwest::Client,
    base_url: String,
}

impl HttpFriendsSource {
    pub fn new(base_url: &str, timeout: Duration) -> Result<Self, FriendsError> {
        Ok(Self {
            http: crate::adapters::tls::http()
                .timeout(timeout)
                .build()
                .map_err(|e| FriendsError::Call(Box::new(e)))?,
            base_url: base_url.trim_end_matches('/').to_owned(),
        })
    }
}

impl FriendsSource for HttpFriendsSource {
    /// A player the graph does not know (404) has no friends. Ids that are not valid
    /// player ids, duplicates and the player themself are dropped.
    #[instrument(skip(self))]
    async fn friends_of(&self, player: &PlayerId) -> Result<Vec<PlayerId>, FriendsError> {
        let url = format!("{}/players/{player}/friends", self.base_url);
        let resp = self
            .http
            .get(url)
            .send()
            .await
            .map_err(|e| FriendsError::Call(Box::new(e)))?;
        if resp.status() == reqwest::StatusCode::NOT_FOUND {
            return Ok(Vec::new());
        }
        if !resp.status().is_success() {
            return Err(FriendsError::Status(resp.status().as_u16()));
        }
        let raw: Vec<String> = resp
            .json()
            .await
            .map_err(|e| FriendsError::Call(Box::new(e)))?;
        if raw.len() > MAX_FRIENDS {
            warn!(count = raw.len(), kept = MAX_FRIENDS, "friends list cut");
        }
        let mut seen = std::collections::HashSet::new();
        Ok(raw
            .iter()
            .filter_map(|id| PlayerId::parse(id).ok())
            .filter(|id| id != player && seen.insert(id.clone()))
            .take(MAX_FRIENDS)
            .collect())
    }
}
