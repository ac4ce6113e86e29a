//! Kafka (Amazon MSK, self-managed) or Kinesis batch -> each record mapped by its
//! source's schema mapping and applied as `POST /scores` applies a result; records that
//! can never apply go to the dead-letter queue; the response names, per partition, the
//! first record to deliver again (`ReportBatchItemFailures`).

use lambda_runtime::LambdaEvent;
use leaderboard::edge::invoke::InvokeError;
use leaderboard::edge::lambda_records;
use leaderboard_core::service::Context;
use leaderboard_core::service::stream_ingest::ingest_stream;
use leaderboard_core::store::{DeadLetters, RankIndex, ScoreStore};
use serde_json::Value;

#[cfg(test)]
mod tests;

pub struct Deps<S, I, D> {
    pub ctx: Context<S, I>,
    pub dead_letters: D,
}

/// Whole-batch failures (delivered again, everything in it replaying): a payload that is
/// no stream event, or what [`ingest_stream`] fails with.
pub async fn handle<S: ScoreStore, I: RankIndex, D: DeadLetters>(
    deps: &Deps<S, I, D>,
    event: LambdaEvent<Value>,
) -> Result<Value, InvokeError> {
    let batch = lambda_records::decode(event.payload)?;
    let out = ingest_stream(&deps.ctx, &deps.dead_letters, &batch.records).await?;
    Ok(lambda_records::response(batch.kind, &out.retry))
}
