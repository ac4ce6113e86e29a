//! A Redis Cluster of the test's own, with replicas, for slot moves and failovers.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use super::*;

/// A Redis Cluster of the test's own (for tests that move slots between its nodes or
/// fail a master over): masters with the slots split evenly, each with its replicas,
/// started by `infra/scripts/cluster.sh` (the same starter as `infra/test.sh` and
/// `infra/up.sh`). Stopped on drop; its files stay in `target/e2e-run/cluster-*`.
pub struct OwnCluster {
    /// The masters' ports, in slot order.
    pub ports: Vec<u16>,
    /// The replicas' ports, with the port of the master each replicates.
    pub replicas: Vec<(u16, u16)>,
    /// Each node's port and process id.
    pids: Vec<(u16, u32)>,
}

/// A free port whose cluster bus port (+10000) is free too, below the ephemeral range
/// (and apart from the range `infra/test.sh` picks its cluster from).
pub(super) fn free_cluster_port(taken: &[u16]) -> u16 {
    pick_port(22_000, 2_000, |p| {
        !taken.contains(&p) && bindable(p + 10_000)
    })
}

impl OwnCluster {
    /// `masters` masters, no replicas.
    pub async fn start(masters: usize) -> Result<Self> {
        Self::start_with(masters, 0).await
    }

    /// `masters` masters with `replicas` replicas each. With replicas, nodes fail over
    /// quickly (1 s node timeout) and a replica may take over however long it was cut off
    /// from its master (validity factor 0), so a test decides what a promoted replica
    /// lacks. Without, the nodes keep the starter's 5 s timeout, so a loaded machine's
    /// pauses are not taken for failures.
    pub async fn start_with(masters: usize, replicas: usize) -> Result<Self> {
        let dir = root().join("target/e2e-run").join(unique("cluster"));
        let mut all = Vec::new();
        for _ in 0..masters * (1 + replicas) {
            all.push(free_cluster_port(&all));
        }
        let out = tokio::process::Command::new("bash")
            .arg(root().join("infra/scripts/cluster.sh"))
            .arg(&dir)
            .arg(replicas.to_string())
            .args(all.iter().map(u16::to_string))
            .args(match replicas {
                0 => &[][..],
                _ => &[
                    "--",
                    "--cluster-node-timeout",
                    "1000",
                    "--cluster-replica-validity-factor",
                    "0",
                ][..],
            })
            .stderr(Stdio::inherit())
            .output()
            .await
            .context("run infra/scripts/cluster.sh")?;
        let pids = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| {
                let (port, pid) = l.split_once(' ')?;
                Some((port.parse().ok()?, pid.parse().ok()?))
            })
            .collect();
        let mut me = Self {
            ports: all[..masters].to_vec(),
            replicas: Vec::new(),
            pids,
        };
        if !out.status.success() {
            bail!("infra/scripts/cluster.sh failed: {}", out.status);
        }
        for &replica in &all[masters..] {
            let info: String = me
                .query(replica, redis::cmd("INFO").arg("replication"))
                .await?;
            let master = info
                .lines()
                .find_map(|l| l.trim().strip_prefix("master_port:"))
                .and_then(|p| p.parse().ok())
                .context("a replica names its master")?;
            me.replicas.push((replica, master));
        }
        Ok(me)
    }

    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        format!("redis+cluster://{}", hosts.join(","))
    }

    /// `cmd` sent to one node as it is (no redirections followed).
    pub async fn query<T: redis::FromRedisValue>(&self, port: u16, cmd: &redis::Cmd) -> Result<T> {
        let mut c = redis::Client::open(format!("redis://127.0.0.1:{port}"))?
            .get_multiplexed_async_connection()
            .await?;
        Ok(cmd.query_async(&mut c).await?)
    }

    /// The node's cluster id.
    pub async fn id_of(&self, port: u16) -> Result<String> {
        self.query(port, redis::cmd("CLUSTER").arg("MYID")).await
    }

    /// The port of the node that serves `slot`, as the nodes that answer say.
    pub async fn owner_of(&self, slot: u16) -> Result<u16> {
        let ports = self.pids.iter().map(|(p, _)| *p).collect::<Vec<_>>();
        for port in ports {
            let Ok(nodes) = self
                .query::<String>(port, redis::cmd("CLUSTER").arg("NODES"))
                .await
            else {
                continue;
            };
            let mine = nodes
                .lines()
                .find(|l| l.contains("myself"))
                .context("myself")?;
            if !mine.contains("master") {
                continue;
            }
            let owns = mine.split_whitespace().skip(8).any(|range| {
                let (lo, hi) = range.split_once('-').unwrap_or((range, range));
                match (lo.parse::<u16>(), hi.parse::<u16>()) {
                    (Ok(lo), Ok(hi)) => (lo..=hi).contains(&slot),
                    _ => false,
                }
            });
            if owns {
                return Ok(port);
            }
        }
        bail!("no node serves slot {slot}")
    }

    fn pid_of(&self, port: u16) -> Option<u32> {
        self.pids
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, pid)| *pid)
    }

    /// Freezes one node (SIGSTOP).
    pub fn pause(&self, port: u16) {
        self.pid_of(port)
            .into_iter()
            .for_each(|pid| signal(pid, "-STOP"));
    }

    /// Lets a frozen node run again.
    pub fn resume(&self, port: u16) {
        self.pid_of(port)
            .into_iter()
            .for_each(|pid| signal(pid, "-CONT"));
    }

    /// Kills one node (SIGKILL) and waits until it is gone.
    pub fn kill(&mut self, port: u16) {
        if let Some(i) = self.pids.iter().position(|(p, _)| *p == port) {
            let (_, pid) = self.pids.remove(i);
            signal(pid, "-KILL");
            gone(pid);
        }
    }
}

/// Waits (up to 5 s) until process `pid` has exited: no longer listed, or a zombie
/// (the script that started it has exited, so whoever reaps it may take its time).
fn gone(pid: u32) {
    for _ in 0..500 {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.chars().next());
        if matches!(state, None | Some('Z') | Some('X')) {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        for &(_, pid) in &self.pids {
            signal(pid, "-KILL");
        }
        for &(_, pid) in &self.pids {
            gone(pid);
        }
        // The nodes' logs and config files stay (a few KB, beside the stacks' run
        // folders), so a failed test can be diagnosed afterwards.
    }
}
