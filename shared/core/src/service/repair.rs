//! Self-repair of the rank index: both ends of the repair queue (SQS).
//!
//! What goes into the queue:
//! - **Boards found not ready.** A function that finds a board's index not ready (no
//!   marker, `stale`, a rebuild that stalled) reports the board through [`Reporter`]. The
//!   first reporter in [`REPAIR_CLAIM`](crate::store::REPAIR_CLAIM) sends the message; the others see the claim in
//!   Redis and send nothing, so a hot board costs one message, not one per read.
//! - **Stream batches the projector gave up on.** The projector's event source mapping
//!   sends a batch that exhausted its retries to the same queue: the on-failure record
//!   names the stream, the shard and the sequence range (not the records).
//!
//! What the `repair` function does with them ([`repair`]):
//! - a reported board is rebuilt (under the board's rebuild lease; a board that is ready
//!   again, gone, or a closed window whose keys expired as intended, needs nothing);
//! - a stream range is read back from the stream and applied exactly as the projector
//!   would have (version-checked, so whatever already arrived is left alone); boards of
//!   the range whose index is not ready are reported. A range that can no longer be
//!   read (the stream keeps records 24 hours) means every board is marked stale, so each
//!   is rebuilt: by its next reader's report, or by the sweep.
//!
//! While Redis is unavailable, the repair waits for it inside the invocation, trying
//! again every [`RETRY_EVERY`] until shortly before its deadline; so a batch given up
//! during an outage is applied within moments of Redis answering again. A message not
//! finished by then is reported failed and the queue hands it back after its visibility
//! timeout (a rebuild resumes from its checkpoint).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tracing::{info, instrument, warn};

use super::Context;
use super::rebuild::{self, Outcome};
use crate::service::ServiceError;
use crate::store::{
    BoardStore, CardCopies, Health, IndexUpkeep, IndexWrites, RebuildNeeded, RebuildStore,
    RepairQueue, StreamRange, StreamSource,
};
use leaderboard_rules::board::BoardStatus;
use leaderboard_rules::ids::LeaderboardId;
use leaderboard_rules::time::now_ms;

/// How often the repair tries Redis again while it is unavailable.
pub const RETRY_EVERY: Duration = Duration::from_millis(200);

/// Reports boards whose index needs a rebuild to the repair queue (when one is
/// configured; without it, the sweep alone repairs).
#[derive(Clone, Default)]
pub struct Reporter {
    queue: Option<Arc<dyn RepairQueue>>,
}

impl Reporter {
    pub fn new(queue: impl RepairQueue + 'static) -> Self {
        Self {
            queue: Some(Arc::new(queue)),
        }
    }

    /// Reports `lb`, seen with `health`, unless another caller did in the last
    /// [`REPAIR_CLAIM`](crate::store::REPAIR_CLAIM). Failures are logged, not returned: the caller's own answer does
    /// not depend on it, and the next reader (or the sweep) reports again.
    pub async fn report<I: IndexUpkeep>(&self, index: &I, lb: &LeaderboardId, health: Health) {
        let Some(queue) = &self.queue else { return };
        match index.claim_repair(lb).await {
            Ok(true) => {}
            Ok(false) => return,
            Err(error) => {
                warn!(board = %lb, %error, "could not claim the repair report; not sending it");
                return;
            }
        }
        let need = RebuildNeeded {
            rebuild: lb.clone(),
            health,
        };
        match queue.report(&need).await {
            Ok(()) => info!(board = %lb, ?health, "rank index reported for repair"),
            Err(error) => warn!(
                board = %lb,
                %error,
                chain = %leaderboard_rules::error::error_chain(&error),
                "could not report the rank index for repair"
            ),
        }
    }
}

/// One message of the repair queue.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RepairMessage {
    /// The stream event source mapping's on-failure record.
    StreamBatch(StreamFailure),
    /// A board reported by a function.
    Rebuild(RebuildNeeded),
}

/// What Lambda sends to an on-failure destination for a DynamoDB stream batch (only the
/// fields the repair reads).
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct StreamFailure {
    #[serde(rename = "DDBStreamBatchInfo")]
    pub batch: StreamBatchInfo,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamBatchInfo {
    pub shard_id: String,
    pub start_sequence_number: String,
    pub end_sequence_number: String,
    pub stream_arn: String,
    #[serde(default)]
    pub batch_size: Option<u64>,
}

/// How a message was handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Handled {
    /// Nothing more to do; the message can go.
    Done,
    /// Not finished (out of time, or a rebuild still in progress); keep the message so
    /// the queue hands it back.
    Again,
}

/// Handles one message before `deadline`.
#[instrument(skip_all)]
pub async fn repair<
    S: BoardStore + RebuildStore,
    I: IndexWrites + IndexUpkeep + CardCopies,
    T: StreamSource,
>(
    ctx: &Context<S, I>,
    stream: &T,
    message: RepairMessage,
    deadline: Instant,
) -> Result<Handled, ServiceError> {
    match message {
        RepairMessage::StreamBatch(failure) => {
            let b = failure.batch;
            let range = StreamRange {
                stream_arn: b.stream_arn,
                shard_id: b.shard_id,
                start: b.start_sequence_number,
                end: b.end_sequence_number,
            };
            replay(ctx, stream, &range, deadline).await
        }
        RepairMessage::Rebuild(need) => rebuild_reported(ctx, &need.rebuild, deadline).await,
    }
}

/// Runs `op` until it succeeds, fails other than by Redis being unavailable, or
/// `deadline` is near; waits [`RETRY_EVERY`] between tries.
pub(crate) async fn while_redis_is_away<T, F, Fut>(
    deadline: Instant,
    mut op: F,
) -> Result<T, ServiceError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ServiceError>>,
{
    loop {
        match op().await {
            Err(ServiceError::Index(e))
                if e.is_outage() && Instant::now() + RETRY_EVERY < deadline =>
            {
                tokio::time::sleep(RETRY_EVERY).await;
            }
            other => return other,
        }
    }
}

/// Applies a stream range again (or, when it is lost, marks every board stale).
#[instrument(skip(ctx, stream, deadline))]
async fn replay<S: BoardStore, I: IndexWrites + IndexUpkeep + CardCopies, T: StreamSource>(
    ctx: &Context<S, I>,
    stream: &T,
    range: &StreamRange,
    deadline: Instant,
) -> Result<Handled, ServiceError> {
    let Some(batch) = stream.read_range(range).await? else {
        warn!(shard = %range.shard_id, start = %range.start, end = %range.end,
              "a stream range given up on can no longer be read; marking every board stale");
        let boards: Vec<LeaderboardId> = rebuild::all_boards(&ctx.store)
            .await?
            .into_iter()
            .map(|b| b.leaderboard_id)
            .collect();
        let marked = while_redis_is_away(deadline, || async {
            Ok(ctx.index.mark_stale(&boards).await?)
        })
        .await?;
        warn!(
            boards = boards.len(),
            marked, "boards marked stale after a lost stream range"
        );
        return Ok(Handled::Done);
    };
    let applied = while_redis_is_away(deadline, || async {
        ctx.index.put_cards(&batch.cards).await?;
        Ok(ctx.index.apply_many(&batch.entries).await?)
    })
    .await?;
    let done = applied.applied.iter().filter(|a| **a).count();
    info!(
        shard = %range.shard_id,
        records = batch.entries.len(),
        applied = done,
        stale = batch.entries.len() - done,
        skipped = batch.skipped,
        poison = batch.poison,
        "stream range applied again"
    );
    for (board, health) in &applied.unready {
        ctx.repairs.report(&ctx.index, board, *health).await;
    }
    Ok(Handled::Done)
}

/// Rebuilds a reported board, unless that is no longer needed.
#[instrument(skip(ctx, deadline))]
async fn rebuild_reported<
    S: BoardStore + RebuildStore,
    I: IndexWrites + IndexUpkeep + CardCopies,
>(
    ctx: &Context<S, I>,
    lb: &LeaderboardId,
    deadline: Instant,
) -> Result<Handled, ServiceError> {
    let health = while_redis_is_away(deadline, || async {
        Ok(ctx.index.health(std::slice::from_ref(lb)).await?)
    })
    .await?;
    if health.first() == Some(&Health::Ready) {
        return Ok(Handled::Done);
    }
    let Some(board) = ctx.store.get_board(lb).await? else {
        warn!(board = %lb, "a board reported for repair does not exist");
        return Ok(Handled::Done);
    };
    let closed = board.effective_status(now_ms()) == BoardStatus::Closed;
    if closed && health.first() == Some(&Health::Missing) && board.window.is_some() {
        // A closed window whose keys expired: read from DynamoDB, as intended.
        return Ok(Handled::Done);
    }
    let one = while_redis_is_away(deadline, || rebuild::rebuild_board(ctx, lb, deadline)).await;
    match one {
        Ok(one) => Ok(match one.outcome {
            // Busy: another rebuild holds the lease and will finish it.
            Outcome::Rebuilt | Outcome::Busy => Handled::Done,
            Outcome::InProgress | Outcome::Restarted => Handled::Again,
        }),
        Err(ServiceError::BoardNotFound(_)) => Ok(Handled::Done),
        Err(ServiceError::Index(e)) if e.is_outage() => Ok(Handled::Again),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_on_failure_record_of_a_stream_batch_is_recognised() {
        // The shape Lambda documents for a DynamoDB stream's on-failure destination.
        let body = r#"{
          "requestContext": {"requestId": "316aa6d0-8154-xmpl-9af7-85d5f4a6bc81",
            "functionArn": "arn:aws:lambda:us-east-2:123456789012:function:myfunction",
            "condition": "RetryAttemptsExhausted", "approximateInvokeCount": 1},
          "responseContext": {"statusCode": 200, "executedVersion": "$LATEST",
            "functionError": "Unhandled"},
          "version": "1.0",
          "timestamp": "2019-11-14T00:13:49.717Z",
          "DDBStreamBatchInfo": {
            "shardId": "shardId-00000001573689847184-864758bb",
            "startSequenceNumber": "800000000003126276362",
            "endSequenceNumber": "800000000003126276362",
            "approximateArrivalOfFirstRecord": "2019-11-14T00:13:19Z",
            "approximateArrivalOfLastRecord": "2019-11-14T00:13:19Z",
            "batchSize": 1,
            "streamArn": "arn:aws:dynamodb:us-east-2:123456789012:table/mytable/stream/2019-11-14T00:04:06.388"
          }
        }"#;
        match serde_json::from_str::<RepairMessage>(body).unwrap() {
            RepairMessage::StreamBatch(f) => {
                assert_eq!(f.batch.shard_id, "shardId-00000001573689847184-864758bb");
                assert_eq!(f.batch.start_sequence_number, "800000000003126276362");
                assert_eq!(f.batch.batch_size, Some(1));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_reported_board_is_recognised_and_anything_else_is_refused() {
        let body = r#"{"rebuild":"g1:ranked","health":"stale"}"#;
        match serde_json::from_str::<RepairMessage>(body).unwrap() {
            RepairMessage::Rebuild(n) => {
                assert_eq!(n.rebuild.as_str(), "g1:ranked");
                assert_eq!(n.health, Health::Stale);
            }
            other => panic!("{other:?}"),
        }
        assert!(
            serde_json::from_str::<RepairMessage>(r#"{"rebuild":"a#b","health":"stale"}"#).is_err()
        );
        assert!(serde_json::from_str::<RepairMessage>(r#"{"hello":1}"#).is_err());
    }
}
