//! Where the index's Redis is and how to reach it: one node or a Redis Cluster, plain or
//! TLS, with or without an auth token kept in AWS Secrets Manager.
//!
//! The topology comes from the URL (or `REDIS_MODE`):
//!
//! - `redis://host:6379`, `rediss://host:6379`: one node (or a primary endpoint).
//! - `redis+cluster://h1:7001,h2:7002`, `rediss+cluster://clustercfg.example:6379`: a
//!   cluster, seeded from any of the listed nodes (the client learns the rest from
//!   `CLUSTER SLOTS` and follows `MOVED`/`ASK` redirections).
//! - `REDIS_MODE=cluster` turns a plain `redis://`/`rediss://` URL into the cluster form.
//!
//! User and password may sit in the URL; with `REDIS_AUTH_SECRET_ARN` the password is the
//! secret's value instead (its `token` field when the secret is JSON), read once, when the
//! first call opens the connection. With `REDIS_IAM_CACHE` the user and password are IAM
//! tokens, renewed on every open connection ([`super::iam`]). `REDIS_TLS_CA_FILE` names a PEM file of roots to trust
//! instead of the bundled public ones (a private CA).

use std::collections::HashMap;
use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClient;
use redis::cluster_async::ClusterConnection;
use redis::cluster_routing::Slot;
use redis::{
    Cmd, ConnectionInfo, IntoConnectionInfo, Pipeline, RedisError, RedisFuture, TlsCertificates,
    Value,
};

use leaderboard_core::store::IndexError;

/// One node or a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topology {
    Single,
    Cluster,
}

impl Topology {
    /// `REDIS_MODE`: `single` (or unset) or `cluster`.
    pub fn parse(mode: Option<&str>) -> Result<Option<Self>, IndexError> {
        match mode.map(str::to_ascii_lowercase).as_deref() {
            None | Some("") => Ok(None),
            Some("single" | "standalone") => Ok(Some(Self::Single)),
            Some("cluster") => Ok(Some(Self::Cluster)),
            Some(other) => Err(IndexError::Config(format!(
                "REDIS_MODE must be single or cluster, not {other:?}"
            ))),
        }
    }
}

/// Where the index's Redis is: its topology and the node URLs to start from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub topology: Topology,
    /// Plain `redis://` or `rediss://` URLs, one per listed node (one for a single node).
    pub nodes: Vec<String>,
}

impl Target {
    /// Parses a `redis[s][+cluster]://[user:pass@]host:port[,host:port…][/…]` URL; `mode`
    /// (from `REDIS_MODE`) overrides what the scheme says.
    pub fn parse(url: &str, mode: Option<Topology>) -> Result<Self, IndexError> {
        let bad = || IndexError::Config("REDIS_URL is not a redis:// URL".to_owned());
        let (scheme, rest) = url.split_once("://").ok_or_else(bad)?;
        let (scheme, clustered) = match scheme.strip_suffix("+cluster") {
            Some(base) => (base, true),
            None => (scheme, false),
        };
        if !matches!(scheme, "redis" | "rediss") {
            return Err(bad());
        }
        let (userinfo, rest) = match rest.split_once('@') {
            Some((user, rest)) => (format!("{user}@"), rest),
            None => (String::new(), rest),
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (hosts, tail) = rest.split_at(end);
        let nodes: Vec<String> = hosts
            .split(',')
            .filter(|h| !h.is_empty())
            .map(|h| format!("{scheme}://{userinfo}{h}{tail}"))
            .collect();
        let topology = mode.unwrap_or(if clustered || nodes.len() > 1 {
            Topology::Cluster
        } else {
            Topology::Single
        });
        if nodes.is_empty() {
            return Err(bad());
        }
        if topology == Topology::Single && nodes.len() > 1 {
            return Err(IndexError::Config(
                "REDIS_URL lists several nodes but REDIS_MODE is single".to_owned(),
            ));
        }
        for node in &nodes {
            node.as_str()
                .into_connection_info()
                .map_err(super::index_error)?;
        }
        Ok(Self { topology, nodes })
    }
}

/// How the connection authenticates and which TLS roots it trusts, beyond the URL.
#[derive(Clone, Default)]
pub struct Access {
    /// Reads the auth token when the connection is first opened.
    pub secret: Option<super::SecretToken>,
    /// Signs IAM tokens for every connection, instead of a password.
    pub iam: Option<super::iam::IamAuth>,
    /// PEM roots to trust instead of the bundled public ones.
    pub ca_pem: Option<Vec<u8>>,
}

/// An open connection to either topology. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl ConnectionLike for Conn {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Single(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        cmd: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Single(c) => c.req_packed_commands(cmd, offset, count),
            Self::Cluster(c) => c.req_packed_commands(cmd, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Single(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

fn with_password(info: ConnectionInfo, password: Option<&str>) -> ConnectionInfo {
    match password {
        None => info,
        Some(p) => {
            let settings = info.redis_settings().clone().set_password(p);
            info.set_redis_settings(settings)
        }
    }
}

impl Access {
    /// The password to authenticate with instead of the URL's: the secret's token when
    /// one is configured (read from Secrets Manager within its own budget).
    pub async fn password(&self) -> Result<Option<String>, IndexError> {
        match &self.secret {
            Some(secret) => Ok(Some(secret.read().await?)),
            None => Ok(None),
        }
    }
}

/// Opens a connection to `target` with `access` (reading its secret first); `timeout`
/// bounds every reply and each connection attempt. For tools and tests; the index opens
/// its connection through `super::link`.
pub async fn connect(
    target: &Target,
    access: &Access,
    timeout: Duration,
) -> Result<Conn, IndexError> {
    let password = access.password().await?;
    let how = Auth {
        password: password.as_deref(),
        iam: access.iam.as_ref(),
        ca_pem: access.ca_pem.as_deref(),
    };
    open(target, how, timeout, timeout).await
}

/// How a connection authenticates: a password (the URL's otherwise), or IAM tokens; and
/// the TLS roots it trusts.
#[derive(Clone, Copy)]
pub(crate) struct Auth<'a> {
    pub password: Option<&'a str>,
    pub iam: Option<&'a super::iam::IamAuth>,
    pub ca_pem: Option<&'a [u8]>,
}

/// Opens a connection to `target`. `call_timeout` bounds every reply; `connect_timeout`
/// each attempt to (re)connect. The client makes one attempt per (re)connection: when
/// to try again is the caller's decision (the index's breaker).
pub(crate) async fn open(
    target: &Target,
    auth: Auth<'_>,
    call_timeout: Duration,
    connect_timeout: Duration,
) -> Result<Conn, IndexError> {
    let Auth {
        password,
        iam,
        ca_pem,
    } = auth;
    let certs = || TlsCertificates {
        client_tls: None,
        root_cert: ca_pem.map(<[u8]>::to_vec),
    };
    crate::adapters::tls::install_provider();
    let infos = target
        .nodes
        .iter()
        .map(|n| Ok(with_password(n.as_str().into_connection_info()?, password)))
        .collect::<Result<Vec<_>, RedisError>>()
        .map_err(super::index_error)?;
    match target.topology {
        Topology::Single => {
            let info = infos
                .into_iter()
                .next()
                .expect("a parsed target has a node");
            let client = match ca_pem {
                Some(_) => {
                    redis::Client::build_with_tls(info, certs()).map_err(super::index_error)?
                }
                None => redis::Client::open(info).map_err(super::index_error)?,
            };
            let mut config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(connect_timeout))
                .set_response_timeout(Some(call_timeout))
                .set_number_of_retries(0);
            if let Some(iam) = iam {
                config = config.set_credentials_provider(iam.clone());
            }
            Ok(Conn::Single(
                ConnectionManager::new_with_config(client, config)
                    .await
                    .map_err(super::index_error)?,
            ))
        }
        Topology::Cluster => {
            // Redirections and TRYAGAIN (a slot whose keys are moving) are retried with
            // short waits, ~0.5 s at most; the caller's own timeout is the real budget.
            // The password is the nodes' own (the builder takes the first node's).
            let mut builder = ClusterClient::builder(infos)
                .connection_timeout(connect_timeout)
                .response_timeout(call_timeout)
                .retries(8)
                .min_retry_wait(5)
                .max_retry_wait(100)
                .retry_wait_formula(5, 2);
            if ca_pem.is_some() {
                builder = builder.certs(certs());
            }
            if let Some(iam) = iam {
                builder = builder.set_credentials_provider(iam.clone());
            }
            let client = builder.build().map_err(super::index_error)?;
            Ok(Conn::Cluster(
                client
                    .get_async_connection()
                    .await
                    .map_err(super::index_error)?,
            ))
        }
    }
}

/// Groups items by the cluster slot of their routing key, keeping each group in the
/// order given; on a single node everything is one group.
pub(crate) fn group_by_slot<'k>(
    topology: Topology,
    keys: impl IntoIterator<Item = &'k str>,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_slot: HashMap<Slot, usize> = HashMap::new();
    for (i, key) in keys.into_iter().enumerate() {
        let slot = match topology {
            Topology::Single => Slot::new(0).expect("slot 0 exists"),
            Topology::Cluster => Slot::for_key(key),
        };
        let g = *by_slot.entry(slot).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scheme_or_the_mode_chooses_the_topology() {
        let t = Target::parse("redis://127.0.0.1:6379", None).unwrap();
        assert_eq!(t.topology, Topology::Single);
        assert_eq!(t.nodes, ["redis://127.0.0.1:6379"]);

        let t = Target::parse("redis+cluster://127.0.0.1:7001,127.0.0.1:7002", None).unwrap();
        assert_eq!(t.topology, Topology::Cluster);
        assert_eq!(
            t.nodes,
            ["redis://127.0.0.1:7001", "redis://127.0.0.1:7002"]
        );

        let t = Target::parse("rediss://:tok@cfg.example:6379/0", Some(Topology::Cluster)).unwrap();
        assert_eq!(t.topology, Topology::Cluster);
        assert_eq!(t.nodes, ["rediss://:tok@cfg.example:6379/0"]);

        let t = Target::parse("rediss+cluster://u:p@a:1,b:2/0", None).unwrap();
        assert_eq!(t.nodes, ["rediss://u:p@a:1/0", "rediss://u:p@b:2/0"]);
    }

    #[test]
    fn malformed_urls_and_contradictions_are_refused() {
        for url in [
            "http://x:1",
            "127.0.0.1:6379",
            "redis+cluster://",
            "redis://a:1,b:2x",
        ] {
            assert!(Target::parse(url, None).is_err(), "{url}");
        }
        assert!(Target::parse("redis://a:1,b:2", Some(Topology::Single)).is_err());
        assert!(Topology::parse(Some("sharded")).is_err());
        assert_eq!(
            Topology::parse(Some("CLUSTER")).unwrap(),
            Some(Topology::Cluster)
        );
        assert_eq!(Topology::parse(None).unwrap(), None);
    }

    #[test]
    fn keys_of_one_board_share_a_group_and_other_boards_split_only_in_a_cluster() {
        let keys = ["lb:{a}:z", "lb:{b}:z", "lb:{a}:h", "rl:p:x"];
        let cluster = group_by_slot(Topology::Cluster, keys);
        assert!(cluster.contains(&vec![0, 2]));
        assert_eq!(cluster.iter().map(Vec::len).sum::<usize>(), 4);
        assert!(cluster.len() >= 2);
        assert_eq!(
            group_by_slot(Topology::Single, keys),
            vec![vec![0, 1, 2, 3]]
        );
    }
}
