//! The correlation id of an invocation: the id a caller or an operator already holds for
//! what triggered it. Every log line of the invocation carries it (an `invocation` span,
//! see `wiring::serve`), beside the Lambda request id the runtime's own span adds.
//!
//! - an API Gateway request: API Gateway's `requestContext.requestId`, the id an error
//!   reply quotes as `request_id` and API Gateway's access log records;
//! - a stream batch (DynamoDB, Kinesis): its first record's `eventID`; an SQS batch: its
//!   first message's `messageId`; an SNS notification: its `MessageId`;
//! - anything else (a schedule, a direct invocation): none, so the Lambda request id.

use aws_lambda_events::event::dynamodb::Event;
use serde_json::Value;

use super::http::Request;

/// An event that names what triggered it.
pub trait Correlated {
    /// The trigger's own id, if the event carries one.
    fn correlation_id(&self) -> Option<String>;
}

impl Correlated for Request {
    fn correlation_id(&self) -> Option<String> {
        self.request_context.request_id.clone()
    }
}

impl Correlated for Event {
    fn correlation_id(&self) -> Option<String> {
        self.records.first().map(|r| r.event_id.clone())
    }
}

impl Correlated for aws_lambda_events::event::sqs::SqsEvent {
    fn correlation_id(&self) -> Option<String> {
        self.records.first().and_then(|r| r.message_id.clone())
    }
}

/// Events read as JSON: the functions reached both over HTTP and directly, and those
/// whose event differs by trigger (stream ingest's Kafka and Kinesis, repair's SQS and
/// SNS).
impl Correlated for Value {
    fn correlation_id(&self) -> Option<String> {
        let first = &self["Records"][0];
        [
            &self["requestContext"]["requestId"],
            &first["eventID"],
            &first["messageId"],
            &first["Sns"]["MessageId"],
        ]
        .into_iter()
        .find_map(|v| v.as_str().map(str::to_owned))
    }
}

#[cfg(test)]
mod tests {
    use super::Correlated;
    use serde_json::json;

    #[test]
    fn each_trigger_names_its_own_id() {
        let cases = [
            (
                json!({"requestContext": {"requestId": "api-1"}}),
                Some("api-1"),
            ),
            (
                json!({"Records": [{"eventID": "shard-1:42"}]}),
                Some("shard-1:42"),
            ),
            (json!({"Records": [{"messageId": "m-7"}]}), Some("m-7")),
            (
                json!({"Records": [{"Sns": {"MessageId": "n-3"}}]}),
                Some("n-3"),
            ),
            (json!({"all": true}), None),
            (json!({"Records": []}), None),
        ];
        for (event, want) in cases {
            assert_eq!(event.correlation_id().as_deref(), want, "{event}");
        }
    }
}
