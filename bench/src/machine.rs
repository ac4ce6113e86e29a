//! The machine a run was made on: CPU, cores, the Redis (or Valkey) server and its version.

use redis::aio::ConnectionManager;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_gib: f64,
    pub os: String,
    pub redis_version: String,
    pub rustc: String,
}

fn first_line_after(text: &str, prefix: &str) -> Option<String> {
    text.lines()
        .find_map(|l| l.strip_prefix(prefix))
        .map(|v| v.trim().trim_matches('"').to_owned())
}

/// The server's name and version: Valkey answers INFO with `valkey_version` (and a
/// Redis-compatible `redis_version` beside it).
pub async fn server_version(conn: &mut ConnectionManager) -> String {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(conn)
        .await
        .unwrap_or_default();
    match first_line_after(&info, "valkey_version:") {
        Some(v) => format!("valkey {v}"),
        None => format!(
            "redis {}",
            first_line_after(&info, "redis_version:").unwrap_or_default()
        ),
    }
}

pub async fn machine(redis: &mut ConnectionManager) -> Machine {
    let read = |path| std::fs::read_to_string(path).unwrap_or_default();
    let cpuinfo = read("/proc/cpuinfo");
    let mem_kib: f64 = first_line_after(&read("/proc/meminfo"), "MemTotal:")
        .and_then(|v| v.trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0.0);
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query_async(redis)
        .await
        .unwrap_or_default();
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    Machine {
        cpu_model: cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .map(|v| v.trim_start_matches([' ', '\t', ':']).to_owned())
            .unwrap_or_default(),
        cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
        memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
        os: first_line_after(&read("/etc/os-release"), "PRETTY_NAME=").unwrap_or_default(),
        redis_version: first_line_after(&info, "redis_version:").unwrap_or_default(),
        rustc,
    }
}
