//! A redis-server of the test's own, and the process helpers its tests share.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result};

use super::*;

/// A free loopback port (bound, released) from 24000-29999: below the ephemeral range,
/// where the kernel hands out the ports of outgoing connections, so no client socket of
/// the tests running beside takes it before the server binds it (`infra/scripts/common.sh`
/// picks its servers' from 10000-19999, the clusters theirs from 20000-21999).
pub fn free_port() -> u16 {
    pick_port(24_000, 6_000, |_| true)
}

/// A random port from `from..from + span` that binds on loopback and `fits`.
pub(super) fn pick_port(from: u16, span: u64, fits: impl Fn(u16) -> bool) -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut rng = Rng::new(nanos ^ (u64::from(std::process::id()) << 32));
    loop {
        let port = from + rng.below(span) as u16;
        if fits(port) && bindable(port) {
            return port;
        }
    }
}

/// Whether nothing holds `port` on loopback now.
pub(super) fn bindable(port: u16) -> bool {
    std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
}

/// A redis-server of the test's own (for tests that kill and restart one).
pub struct OwnRedis {
    pub port: u16,
    /// Its data directory, when it keeps its data across a restart.
    dir: Option<PathBuf>,
    child: Option<std::process::Child>,
}

/// Sends `sig` (`-STOP`, `-CONT`, `-KILL`) to a process.
pub(super) fn signal(pid: u32, sig: &str) {
    let _ = std::process::Command::new("kill")
        .arg(sig)
        .arg(pid.to_string())
        .status();
}

/// Sends `sig` to a server process of a test's own, if it runs.
pub(super) fn signal_child(child: Option<&std::process::Child>, sig: &str) {
    if let Some(c) = child {
        signal(c.id(), sig);
    }
}

impl OwnRedis {
    /// Reserves a port without starting the server yet; the server keeps nothing across
    /// a restart.
    pub fn reserve() -> Self {
        Self {
            port: free_port(),
            dir: None,
            child: None,
        }
    }

    /// Like [`OwnRedis::reserve`], with a data directory of its own, so that
    /// [`OwnRedis::shutdown_saving`] and `start` bring it back with its data.
    pub fn persistent() -> Self {
        Self {
            port: free_port(),
            dir: Some(root().join("target/e2e-run").join(unique("redis"))),
            child: None,
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub async fn start(&mut self) -> Result<()> {
        let mut cmd = std::process::Command::new("redis-server");
        cmd.args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"]);
        if let Some(dir) = &self.dir {
            std::fs::create_dir_all(dir)?;
            cmd.arg("--dir").arg(dir).args(["--dbfilename", "dump.rdb"]);
        }
        let child = cmd
            .stdout(Stdio::null())
            .spawn()
            .context("start redis-server (is it installed? infra/test.sh installs it)")?;
        self.child = Some(child);
        wait_for_tcp(self.port, Duration::from_secs(10)).await
    }

    /// Kills the server (SIGKILL): its data is gone; `start` again brings an empty one
    /// up on the same port.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Stops the server the way an operator would, saving its data first (`SHUTDOWN
    /// SAVE`); a persistent server's `start` then loads it back.
    pub async fn shutdown_saving(&mut self) -> Result<()> {
        let mut conn = redis::Client::open(self.url())?
            .get_multiplexed_async_connection()
            .await?;
        // The server closes the connection instead of answering.
        let _ = redis::cmd("SHUTDOWN")
            .arg("SAVE")
            .query_async::<redis::Value>(&mut conn)
            .await;
        if let Some(mut c) = self.child.take() {
            c.wait()?;
        }
        Ok(())
    }

    /// Freezes the server (SIGSTOP): connections hang, as with a stalled Redis.
    pub fn pause(&self) {
        signal_child(self.child.as_ref(), "-STOP");
    }

    /// Lets a paused server run again, with all its data.
    pub fn resume(&self) {
        signal_child(self.child.as_ref(), "-CONT");
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        self.kill();
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
