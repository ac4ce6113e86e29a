//! `infra/local/meter.py` in front of the run's DynamoDB endpoint, used for the crashes
//! it injects: a call dropped before its write, a reply lost after it, a writer held
//! between its reads and its write (the meter's doc has the modes).

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result};

use super::*;

/// One meter process of the test's own, stopped when dropped.
pub struct CrashProxy {
    port: u16,
    child: tokio::process::Child,
    http: reqwest::Client,
}

/// How an armed fault breaks its call.
#[derive(Debug, Clone, Copy)]
pub enum Crash {
    /// Not forwarded: the process died before the write.
    Before,
    /// Forwarded, reply lost: the process died after the write.
    After,
    /// Held until [`CrashProxy::release`].
    Hold,
}

impl CrashProxy {
    pub async fn start() -> Result<Self> {
        let port = free_port();
        let child = tokio::process::Command::new(python())
            .arg(root().join("infra/local/meter.py"))
            .args(["--upstream", &dynamodb_url(), "--port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("start meter.py")?;
        wait_for_tcp(port, Duration::from_secs(30)).await?;
        Ok(Self {
            port,
            child,
            http: leaderboard::adapters::tls::http().build()?,
        })
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Arms one fault: the `skip + 1`-th `op` on an item whose partition key starts
    /// with `pk_prefix` breaks as `crash` says.
    pub async fn arm(&self, op: &str, pk_prefix: &str, skip: u32, crash: Crash) -> Result<()> {
        let mode = match crash {
            Crash::Before => "before",
            Crash::After => "after",
            Crash::Hold => "hold",
        };
        let spec =
            serde_json::json!({"op": op, "pk_prefix": pk_prefix, "skip": skip, "mode": mode});
        self.post("fault", Some(spec)).await
    }

    /// Lets a held call go on.
    pub async fn release(&self) -> Result<()> {
        self.post("release", None).await
    }

    /// How many times the armed fault fired, and whether a call is held now.
    pub async fn fired(&self) -> Result<(u64, bool)> {
        let state: serde_json::Value = (self.http)
            .get(format!("{}/__meter/fault", self.url()))
            .send()
            .await?
            .json()
            .await?;
        Ok((state["fired"].as_u64().unwrap_or(0), state["held"] == true))
    }

    async fn post(&self, what: &str, body: Option<serde_json::Value>) -> Result<()> {
        let req = self.http.post(format!("{}/__meter/{what}", self.url()));
        let req = match body {
            Some(b) => req.json(&b),
            None => req,
        };
        req.send().await?.error_for_status()?;
        Ok(())
    }
}

impl Drop for CrashProxy {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}
