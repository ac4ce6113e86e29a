//! One server's measurements (a column of the results): the loads and every Redis path,
//! and the ratios and throughput they give against their bare twins.

use serde::Serialize;

use crate::board::LoadRate;
use crate::postgres::PostgresResults;
use crate::projector::Sharded;
use crate::redis_ops::RedisResults;
use crate::report::{Ratios, Throughput};
use crate::stats::Summary;

fn records_per_s(batch: usize, s: &Summary) -> f64 {
    batch as f64 * 1e6 / s.mean_us
}

fn ratio(a: f64, b: f64) -> f64 {
    (a / b * 100.0).round() / 100.0
}

/// One server's measurements: the two loads and every Redis path.
pub struct Column {
    pub rebuild: LoadRate,
    pub bare_load: LoadRate,
    pub latency: RedisResults,
    pub sharded: Sharded,
    pub without_dense: WithoutDense,
}

/// The writing paths again on a board created without dense ranks.
pub struct WithoutDense {
    pub rebuild: LoadRate,
    pub sharded: Sharded,
    pub projector_batch_1000: Summary,
    pub projector_redis_us_per_batch_1000: f64,
}

/// A board without dense ranks: the projector and the rebuild load, with their ratios
/// to the same bare twins as the main board's.
#[derive(Debug, Clone, Serialize)]
pub struct WithoutDenseResults {
    pub projector_records_per_s: f64,
    pub projector_vs_bare: f64,
    /// As `throughput.projector_sharded_records_per_s`, on this board.
    pub projector_sharded_records_per_s: f64,
    pub projector_sharded: Sharded,
    pub rebuild_players_per_s: f64,
    pub rebuild_vs_floor: f64,
    pub projector_batch_1000_us: Summary,
    /// Redis server time (its own command stats) per 1,000-record batch.
    pub projector_redis_us_per_batch_1000: f64,
    pub rebuild_load: LoadRate,
}

impl Column {
    pub(crate) fn ratios(&self, postgres: Option<&PostgresResults>) -> Ratios {
        let r = &self.latency;
        let t = self.throughput(None);
        Ratios {
            rank_p99_vs_bare: ratio(r.rank_neighbours.ours.p99_us, r.rank_neighbours.bare.p99_us),
            top_p99_vs_bare: ratio(r.top_100.ours.p99_us, r.top_100.bare.p99_us),
            friends_p99_vs_bare: ratio(r.friends_500.ours.p99_us, r.friends_500.bare.p99_us),
            apply_p99_vs_bare: ratio(r.ingest_apply.ours.p99_us, r.ingest_apply.bare.p99_us),
            rank_p99_names_vs_without: ratio(r.rank_with_names.p99_us, r.rank_without_names.p99_us),
            top_p99_names_vs_without: ratio(r.top_with_names.p99_us, r.top_without_names.p99_us),
            rebuild_vs_floor: ratio(t.rebuild_players_per_s, t.bare_load_players_per_s),
            projector_vs_bare: ratio(t.projector_records_per_s, t.bare_pipelined_per_s_batch_1000),
            postgres_rank_over_ours: postgres
                .map(|p| ratio(p.rank_neighbours.p50_us, r.rank_neighbours.ours.p50_us)),
            postgres_top_over_ours: postgres
                .map(|p| ratio(p.top_100.p50_us, r.top_100.ours.p50_us)),
        }
    }

    pub(crate) fn without_dense(&self) -> WithoutDenseResults {
        let w = &self.without_dense;
        let t = self.throughput(None);
        let projector = records_per_s(1_000, &w.projector_batch_1000).round();
        WithoutDenseResults {
            projector_records_per_s: projector,
            projector_vs_bare: ratio(projector, t.bare_pipelined_per_s_batch_1000),
            projector_sharded_records_per_s: w.sharded.records_per_s,
            projector_sharded: w.sharded.clone(),
            rebuild_players_per_s: w.rebuild.players_per_s.round(),
            rebuild_vs_floor: ratio(w.rebuild.players_per_s, t.bare_load_players_per_s),
            projector_batch_1000_us: w.projector_batch_1000,
            projector_redis_us_per_batch_1000: w.projector_redis_us_per_batch_1000,
            rebuild_load: w.rebuild,
        }
    }

    pub(crate) fn throughput(&self, postgres: Option<&PostgresResults>) -> Throughput {
        let r = &self.latency;
        Throughput {
            projector_records_per_s: records_per_s(1_000, &r.projector_batch_1000.ours).round(),
            projector_records_per_s_batch_100: records_per_s(100, &r.projector_batch_100.ours)
                .round(),
            bare_pipelined_per_s_batch_1000: records_per_s(1_000, &r.projector_batch_1000.bare)
                .round(),
            projector_sharded_records_per_s: self.sharded.records_per_s,
            projector_shards: self.sharded.shards,
            rebuild_players_per_s: self.rebuild.players_per_s.round(),
            bare_load_players_per_s: self.bare_load.players_per_s.round(),
            postgres_copy_rows_per_s: postgres.map(|p| p.load.players_per_s.round()),
        }
    }
}
