//! Latency samples and their summary (percentiles in microseconds, operations per second).

use std::future::Future;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// Runs `op(i)` for `i` in `0..n` from `tasks` tasks at once (task `w` takes `w`,
/// `w + tasks`, ...); each outcome with its latency, and the whole run's time.
pub async fn in_tasks<T, F, Fut>(
    n: u64,
    tasks: usize,
    op: F,
) -> anyhow::Result<(Vec<(Duration, T)>, Duration)>
where
    T: Send + 'static,
    F: Fn(u64) -> Fut + Clone + Send + Sync + 'static,
    Fut: Future<Output = anyhow::Result<T>> + Send,
{
    let started = Instant::now();
    let runs = (0..tasks).map(|w| {
        let op = op.clone();
        tokio::spawn(async move {
            let mut out = Vec::new();
            for i in (w as u64..n).step_by(tasks) {
                let at = Instant::now();
                let v = op(i).await?;
                out.push((at.elapsed(), v));
            }
            Ok::<_, anyhow::Error>(out)
        })
    });
    let mut all = Vec::with_capacity(n as usize);
    for r in futures::future::join_all(runs).await {
        all.extend(r??);
    }
    Ok((all, started.elapsed()))
}

/// Percentiles of one measured operation.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    pub n: usize,
    pub p50_us: f64,
    pub p95_us: f64,
    pub p99_us: f64,
    pub mean_us: f64,
    /// Sequential operations per second from one client (1 / mean latency).
    pub ops_per_s: f64,
}

impl Summary {
    pub fn of(mut samples: Vec<Duration>) -> Self {
        samples.sort_unstable();
        let n = samples.len().max(1);
        let at = |q: f64| {
            let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
            samples.get(i).map_or(0.0, |d| d.as_secs_f64() * 1e6)
        };
        let total: Duration = samples.iter().sum();
        let mean_us = total.as_secs_f64() * 1e6 / n as f64;
        Self {
            n: samples.len(),
            p50_us: at(0.50),
            p95_us: at(0.95),
            p99_us: at(0.99),
            mean_us,
            ops_per_s: if mean_us > 0.0 { 1e6 / mean_us } else { 0.0 },
        }
    }
}

pub fn bar(len: u64, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg:>28} [{bar:40}] {human_pos}/{human_len} {per_sec} eta {eta}",
        )
        .expect("a valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// Runs `op(i)` `n` times after `warmup` unmeasured runs, one at a time, timing each.
pub async fn measure<F, Fut, T>(
    what: &str,
    warmup: usize,
    n: usize,
    mut op: F,
) -> anyhow::Result<Summary>
where
    F: FnMut(usize) -> Fut,
    Fut: Future<Output = anyhow::Result<T>>,
{
    for i in 0..warmup {
        op(i).await?;
    }
    let bar = bar(n as u64, what);
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let start = Instant::now();
        std::hint::black_box(op(warmup + i).await?);
        samples.push(start.elapsed());
        bar.inc(1);
    }
    bar.finish_and_clear();
    let s = Summary::of(samples);
    println!(
        "{what:>28}: p50 {:>9.1} us  p95 {:>9.1} us  p99 {:>9.1} us  ({:.0} ops/s)",
        s.p50_us, s.p95_us, s.p99_us, s.ops_per_s
    );
    Ok(s)
}

/// Two operations measured in turns (a, b, b, a, a, b, ...), so drift on the machine
/// (another process, a warming cache) weighs on both alike: for a ratio of the two.
pub async fn measure_pair<A, FutA, B, FutB, T, U>(
    what: (&str, &str),
    warmup: usize,
    n: usize,
    mut a: A,
    mut b: B,
) -> anyhow::Result<(Summary, Summary)>
where
    A: FnMut(usize) -> FutA,
    FutA: Future<Output = anyhow::Result<T>>,
    B: FnMut(usize) -> FutB,
    FutB: Future<Output = anyhow::Result<U>>,
{
    for i in 0..warmup {
        a(i).await?;
        b(i).await?;
    }
    let bar = bar(n as u64, &format!("{} / {}", what.0, what.1));
    let (mut sa, mut sb) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n {
        let j = warmup + i;
        let timed_a = async |a: &mut A| {
            let start = Instant::now();
            std::hint::black_box(a(j).await?);
            Ok::<_, anyhow::Error>(start.elapsed())
        };
        let timed_b = async |b: &mut B| {
            let start = Instant::now();
            std::hint::black_box(b(j).await?);
            Ok::<_, anyhow::Error>(start.elapsed())
        };
        if i % 2 == 0 {
            sa.push(timed_a(&mut a).await?);
            sb.push(timed_b(&mut b).await?);
        } else {
            sb.push(timed_b(&mut b).await?);
            sa.push(timed_a(&mut a).await?);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (sa, sb) = (Summary::of(sa), Summary::of(sb));
    for (name, s) in [(what.0, &sa), (what.1, &sb)] {
        println!(
            "{name:>28}: p50 {:>9.1} us  p95 {:>9.1} us  p99 {:>9.1} us  ({:.0} ops/s)",
            s.p50_us, s.p95_us, s.p99_us, s.ops_per_s
        );
    }
    Ok((sa, sb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let s = Summary::of((1..=100).map(Duration::from_micros).collect());
        assert_eq!((s.p50_us, s.p95_us, s.p99_us), (50.0, 95.0, 99.0));
        assert!((s.mean_us - 50.5).abs() < 1e-9);
    }
}
