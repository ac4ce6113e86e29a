//! The edge: Lambda events in, replies out. Handlers decode here, call one use case and
//! encode its answer here; no use case sees an event type.
//!
//! - [`http`]: API Gateway requests (payload 2.0): routes, parameters, who is calling;
//!   [`body`]: a JSON body read into its route's type; [`reply`]: replies and the one
//!   mapping from error codes to statuses;
//! - [`lambda_stream`]: DynamoDB stream events in, batch responses out;
//! - [`lambda_records`]: Kafka and Kinesis events in (stream ingest), batch responses out;
//! - [`invoke`]: the error surface (`Diagnostic`) of the event-driven functions, and the
//!   operations functions called both over HTTP and directly;
//! - [`correlation`]: the id every log line of an invocation carries.

pub mod body;
pub mod correlation;
pub mod http;
pub mod invoke;
pub mod lambda_records;
pub mod lambda_stream;
pub mod reply;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;
