//! A Redis Cluster of the test's own, with replicas, for slot moves and failovers.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result, bail};

use super::*;

/// A Redis Cluster of the test's own (for tests that move slots between its nodes or
/// fail a master over): masters with the slots split evenly, each with its replicas.
/// Stopped on drop.
pub struct OwnCluster {
    /// The masters' ports, in slot order.
    pub ports: Vec<u16>,
    /// The replicas' ports, with the port of the master each replicates.
    pub replicas: Vec<(u16, u16)>,
    dir: PathBuf,
    children: Vec<(u16, std::process::Child)>,
}

/// A free port whose cluster bus port (+10000) is free too, below the ephemeral range
/// (and apart from the range `infra/test.sh` picks its cluster from).
pub(super) fn free_cluster_port(taken: &[u16]) -> u16 {
    let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
    let mut rng = Rng::new(std::process::id() as u64 ^ u64::from(free_port()));
    loop {
        let p = 22_000 + rng.below(2_000) as u16;
        if !taken.contains(&p) && free(p) && free(p + 10_000) {
            return p;
        }
    }
}

impl OwnCluster {
    /// `masters` masters, no replicas.
    pub async fn start(masters: usize) -> Result<Self> {
        Self::start_with(masters, 0).await
    }

    /// `masters` masters with `replicas` replicas each. Nodes fail over quickly (1 s node
    /// timeout) and a replica may take over however long it was cut off from its master
    /// (validity factor 0), so a test decides what a promoted replica lacks.
    pub async fn start_with(masters: usize, replicas: usize) -> Result<Self> {
        let dir = root().join("target/e2e-run").join(unique("cluster"));
        std::fs::create_dir_all(&dir)?;
        let mut me = Self {
            ports: Vec::new(),
            replicas: Vec::new(),
            dir,
            children: Vec::new(),
        };
        let mut all = Vec::new();
        for i in 0..masters * (1 + replicas) {
            let port = free_cluster_port(&all);
            let child = std::process::Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args([
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-node-timeout",
                    "1000",
                    "--cluster-replica-validity-factor",
                    "0",
                ])
                .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                .arg("--dir")
                .arg(&me.dir)
                .stdout(Stdio::null())
                .spawn()
                .context("start redis-server in cluster mode")?;
            all.push(port);
            me.children.push((port, child));
            if i < masters {
                me.ports.push(port);
            } else {
                me.replicas.push((port, me.ports[(i - masters) % masters]));
            }
        }
        for &port in &all {
            wait_for_tcp(port, Duration::from_secs(10)).await?;
        }
        let per = 16_384 / masters;
        for (i, &port) in me.ports.iter().enumerate() {
            let lo = i * per;
            let hi = if i + 1 == masters {
                16_383
            } else {
                lo + per - 1
            };
            let _: () = me
                .query(
                    port,
                    redis::cmd("CLUSTER").arg("ADDSLOTSRANGE").arg(lo).arg(hi),
                )
                .await?;
            // Distinct config epochs, as `redis-cli --cluster create` gives them: left
            // equal, the nodes settle their collision later, and a slot moved meanwhile can
            // lose its keys (the importing node yields the slot and deletes them).
            let _: () = me
                .query(
                    port,
                    redis::cmd("CLUSTER").arg("SET-CONFIG-EPOCH").arg(i + 1),
                )
                .await?;
        }
        for &port in &all[1..] {
            let _: () = me
                .query(
                    all[0],
                    redis::cmd("CLUSTER").arg("MEET").arg("127.0.0.1").arg(port),
                )
                .await?;
        }
        let known = format!("cluster_known_nodes:{}", all.len());
        eventually(Duration::from_secs(30), "the nodes to meet", || async {
            for &port in &all {
                let info: String = me.query(port, redis::cmd("CLUSTER").arg("INFO")).await?;
                if !info.contains(&known) {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
        .await?;
        for &(replica, master) in &me.replicas {
            let id = me.id_of(master).await?;
            let _: () = me
                .query(replica, redis::cmd("CLUSTER").arg("REPLICATE").arg(&id))
                .await?;
        }
        eventually(Duration::from_secs(30), "the cluster to form", || async {
            for &port in &all {
                let info: String = me.query(port, redis::cmd("CLUSTER").arg("INFO")).await?;
                if !info.contains("cluster_state:ok") {
                    return Ok(None);
                }
            }
            for &(replica, _) in &me.replicas {
                let info: String = me
                    .query(replica, redis::cmd("INFO").arg("replication"))
                    .await?;
                if !info.contains("master_link_status:up") {
                    return Ok(None);
                }
            }
            Ok(Some(()))
        })
        .await?;
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
        let ports = self.children.iter().map(|(p, _)| *p).collect::<Vec<_>>();
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
        self.children
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, c)| c.id())
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

    /// Kills one node (SIGKILL).
    pub fn kill(&mut self, port: u16) {
        if let Some(i) = self.children.iter().position(|(p, _)| *p == port) {
            let (_, mut c) = self.children.remove(i);
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        for (_, c) in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
