//! A DynamoDB endpoint of the test's own, for tests that stop and restart it.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

use super::*;

/// A DynamoDB endpoint of the test's own (`dynamodb_server.py` with a state file), for
/// tests that stop and restart it.
pub struct OwnDynamo {
    pub port: u16,
    state: PathBuf,
    child: Option<std::process::Child>,
}

impl OwnDynamo {
    pub async fn start_new() -> Result<Self> {
        let mut me = Self {
            port: free_port(),
            state: root()
                .join("target/e2e-run")
                .join(format!("{}.state", unique("ddb"))),
            child: None,
        };
        me.start().await?;
        Ok(me)
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts it (again), loading the state a graceful stop saved.
    pub async fn start(&mut self) -> Result<()> {
        std::fs::create_dir_all(self.state.parent().context("state dir")?)?;
        let child = std::process::Command::new(python())
            .arg(root().join("infra/local/dynamodb_server.py"))
            .args(["--port", &self.port.to_string()])
            .arg("--state-file")
            .arg(&self.state)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("start dynamodb_server.py")?;
        self.child = Some(child);
        wait_for_tcp(self.port, Duration::from_secs(30)).await
    }

    /// Stops it gracefully (SIGTERM): it saves its tables first.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            signal(c.id(), "-TERM");
            let _ = c.wait();
        }
    }

    /// Freezes it (SIGSTOP): connections are accepted and requests hang unanswered, as
    /// with a DynamoDB that stopped responding.
    pub fn pause(&self) {
        signal_child(self.child.as_ref(), "-STOP");
    }

    /// Lets a paused endpoint run again: the requests it held are answered then.
    pub fn resume(&self) {
        signal_child(self.child.as_ref(), "-CONT");
    }
}

impl Drop for OwnDynamo {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_file(&self.state);
    }
}

pub async fn wait_for_tcp(port: u16, within: Duration) -> Result<()> {
    let start = Instant::now();
    while start.elapsed() < within {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    bail!("nothing listens on port {port} after {within:?}")
}
