//! The index's connection: opened on first use, shared by every call in a container,
//! and never a reason for a caller to wait longer than its own budget.
//!
//! Opening (reading the auth token once, TCP, TLS, AUTH, and for a cluster the slot map)
//! is one attempt shared by everyone who asks while it runs. The attempt is spawned, so
//! it finishes (bounded by the connect timeout) even if every caller gave up waiting; a
//! caller waits for it at most its own budget. A silent Redis (a hung process accepts TCP
//! connections into its backlog but never answers the handshake) therefore costs a
//! caller one budget, and the index's breaker then fails the following calls at once.
//!
//! Once open, the connection reconnects by itself when it errors (the connection manager
//! on one node, the cluster client per node); every command is bounded by the caller's
//! timeout, so a reconnect in progress is waited on no longer than any other reply. A
//! connection that goes silent without erroring is let go when its timeouts open the
//! breaker ([`Link::close`]), and the next call opens another.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use tokio::sync::OnceCell;
use tracing::info;

use super::conn::{self, Access, Conn, Target, Topology};
use leaderboard_core::store::IndexError;

type Attempt = Shared<BoxFuture<'static, Result<Conn, Arc<IndexError>>>>;

enum Slot {
    Closed,
    Opening(Attempt),
    Open(Conn),
}

pub(crate) struct Link {
    target: Target,
    access: Access,
    /// Every reply's budget (also given to the client as its response timeout).
    call_timeout: Duration,
    /// One attempt to open the connection.
    connect_timeout: Duration,
    slot: Arc<Mutex<Slot>>,
    /// The auth token (or none), read once per container.
    password: Arc<OnceCell<Option<String>>>,
}

fn lock(slot: &Mutex<Slot>) -> MutexGuard<'_, Slot> {
    // Held for a match and an assignment only; a panic there cannot corrupt the slot.
    slot.lock().unwrap_or_else(|e| e.into_inner())
}

impl Link {
    pub fn new(
        target: Target,
        access: Access,
        call_timeout: Duration,
        connect_timeout: Duration,
    ) -> Self {
        Self {
            target,
            access,
            call_timeout,
            connect_timeout,
            slot: Arc::new(Mutex::new(Slot::Closed)),
            password: Arc::new(OnceCell::new()),
        }
    }

    pub fn topology(&self) -> Topology {
        self.target.topology
    }

    /// The connection, waiting at most `wait` for it to open (an attempt is started if
    /// none is running).
    pub async fn get(&self, wait: Duration) -> Result<Conn, IndexError> {
        let attempt = {
            let mut slot = lock(&self.slot);
            match &*slot {
                Slot::Open(conn) => return Ok(conn.clone()),
                Slot::Opening(attempt) => attempt.clone(),
                Slot::Closed => {
                    let attempt = self.attempt();
                    *slot = Slot::Opening(attempt.clone());
                    tokio::spawn(attempt.clone());
                    attempt
                }
            }
        };
        match tokio::time::timeout(wait, attempt).await {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(IndexError::Connect(e)),
            Err(_) => Err(IndexError::Timeout(wait)),
        }
    }

    /// Lets the open connection go (calls still using it finish on it); the next call
    /// opens another.
    pub fn close(&self) {
        let mut slot = lock(&self.slot);
        if matches!(*slot, Slot::Open(_)) {
            *slot = Slot::Closed;
            info!(
                "Redis connection closed after consecutive timeouts; the next call opens another"
            );
        }
    }

    /// One attempt to open the connection; it leaves the slot open or closed when done.
    fn attempt(&self) -> Attempt {
        let target = self.target.clone();
        let access = self.access.clone();
        let slot = self.slot.clone();
        let password = self.password.clone();
        let (call, connect) = (self.call_timeout, self.connect_timeout);
        async move {
            let opened = async {
                let password = password
                    .get_or_try_init(|| access.password())
                    .await?
                    .clone();
                let auth = conn::Auth {
                    password: password.as_deref(),
                    iam: access.iam.as_ref(),
                    ca_pem: access.ca_pem.as_deref(),
                };
                let opening = conn::open(&target, auth, call, connect);
                tokio::time::timeout(connect, opening)
                    .await
                    .map_err(|_| IndexError::Timeout(connect))?
            }
            .await;
            let mut slot = lock(&slot);
            match &opened {
                Ok(conn) => {
                    info!(topology = ?target.topology, "Redis connection opened");
                    *slot = Slot::Open(conn.clone());
                }
                Err(_) => *slot = Slot::Closed,
            }
            opened.map_err(Arc::new)
        }
        .boxed()
        .shared()
    }
}
