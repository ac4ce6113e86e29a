//! A TCP proxy in front of a test's Redis (or DynamoDB), for the part of a hang a
//! stopped process cannot make deterministic, and for a server that answers slowly.
//!
//! While a redis-server is stopped (SIGSTOP), what clients send piles up in its socket
//! buffers and runs the moment it continues: commands queued during a hang may heal an
//! index by luck. Behind this proxy they cannot. [`FaultProxy::hang`] stops forwarding
//! in both directions (clients see a silent server: connections are accepted, nothing
//! is answered); [`FaultProxy::cut`] closes every connection it holds, dropping whatever
//! the clients sent meanwhile, and forwards again: only what clients send afterwards, on
//! new connections, reaches the server. [`FaultProxy::slow`] holds every chunk of bytes,
//! either way, for a while before forwarding it.

use std::sync::Arc;

use anyhow::Result;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// What the connections are told: whether to forward, and which generation of
/// connections may live (a cut ends every older one).
#[derive(Clone, Copy, Default)]
struct Control {
    hung: bool,
    generation: u64,
    delay: std::time::Duration,
}

/// A proxy on a free loopback port, forwarding to `127.0.0.1:upstream`; stops with the
/// test's runtime.
pub struct FaultProxy {
    pub port: u16,
    control: Arc<watch::Sender<Control>>,
}

impl FaultProxy {
    pub async fn start(upstream: u16) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let control = Arc::new(watch::Sender::new(Control::default()));
        let accept = control.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let ctl = accept.subscribe();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)).await else {
                        return;
                    };
                    let generation = ctl.borrow().generation;
                    let (cr, cw) = client.into_split();
                    let (sr, sw) = server.into_split();
                    // Either direction ending (or a cut) drops both sockets.
                    tokio::select! {
                        () = pump(cr, sw, ctl.clone(), generation) => {}
                        () = pump(sr, cw, ctl, generation) => {}
                    }
                });
            }
        });
        Ok(Self { port, control })
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    /// Stops forwarding: clients see a silent server.
    pub fn hang(&self) {
        self.control.send_modify(|c| c.hung = true);
    }

    /// Holds every chunk for `delay` before forwarding it (zero: forward at once).
    pub fn slow(&self, delay: std::time::Duration) {
        self.control.send_modify(|c| c.delay = delay);
    }

    /// Closes every connection (what clients sent since the hang never reaches the
    /// server) and forwards again.
    pub fn cut(&self) {
        self.control.send_modify(|c| {
            c.generation += 1;
            c.hung = false;
        });
    }
}

/// Forwards `from` to `to` while not hung; returns when either side closes or a cut
/// ends this connection's generation.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    mut ctl: watch::Receiver<Control>,
    generation: u64,
) {
    let mut buf = vec![0_u8; 16 * 1024];
    loop {
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            _ = ctl.wait_for(|c| c.generation != generation) => return,
        };
        // Held while hung; a cut drops it with the connection.
        match ctl
            .wait_for(|c| c.generation != generation || !c.hung)
            .await
        {
            Ok(c) if c.generation == generation => {}
            _ => return,
        }
        let delay = ctl.borrow().delay;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}
