//! The error surface of the event-driven functions (stream and queue batches, schedules,
//! direct invocations): what such an invocation fails with, and the stable `errorType`
//! Lambda records for it (instead of the Rust type name of a boxed error).

use std::time::{Duration, Instant};

use aws_lambda_events::event::apigw::ApiGatewayV2httpRequest;
use lambda_runtime::Diagnostic;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use thiserror::Error;

use crate::edge::{body, reply};
use leaderboard_core::service::ServiceError;

/// How an operations function (rebuild, seal) was called: through its admin route (the
/// request is the JSON body; an empty body is `{}`), or directly or by its schedule (the
/// request is the payload).
pub enum Call<T> {
    /// Over HTTP: the body read, and the request (without it) to answer.
    Http(Result<T, ServiceError>, Box<ApiGatewayV2httpRequest>),
    Direct(T),
}

/// An HTTP request a [`Call`] came in, kept to answer it ([`answer`]).
pub(crate) type Asked = Option<Box<ApiGatewayV2httpRequest>>;

impl<T: DeserializeOwned> Call<T> {
    pub fn of(payload: Value) -> Result<Self, InvokeError> {
        if payload.get("requestContext").is_none() {
            return Ok(Self::Direct(serde_json::from_value(payload)?));
        }
        let mut req: ApiGatewayV2httpRequest = serde_json::from_value(payload)?;
        if req.body.as_deref().is_none_or(str::is_empty) {
            req.body = Some("{}".into());
        }
        let body = body::json_body(&req).map_err(ServiceError::from);
        req.body = None;
        Ok(Self::Http(body, Box::new(req)))
    }

    /// The HTTP request this call came in, if it came over HTTP.
    pub fn over_http(&self) -> Asked {
        match self {
            Self::Http(_, req) => Some(req.clone()),
            Self::Direct(_) => None,
        }
    }

    /// The request (a bad body over HTTP is the caller's error).
    pub fn request(self) -> Result<T, ServiceError> {
        match self {
            Self::Http(body, _) => body,
            Self::Direct(req) => Ok(req),
        }
    }
}

/// The answer to a [`Call`]: over HTTP a JSON reply (200 when `done`, else 202, or the
/// error's status); otherwise the report itself, an error failing the invocation.
pub fn answer<R: Serialize>(
    over_http: Asked,
    result: Result<R, ServiceError>,
    done: impl Fn(&R) -> bool,
) -> Result<Value, InvokeError> {
    let Some(req) = over_http else {
        return Ok(serde_json::to_value(result?)?);
    };
    let response = match result {
        Ok(report) => reply::json(if done(&report) { 200 } else { 202 }, &report),
        Err(e) => reply::error_response(&e),
    };
    Ok(serde_json::to_value(reply::stamped(&req, response))?)
}

/// When a resumable invocation stops working: `margin` before the Lambda deadline
/// (`event_deadline_ms`, ms since the epoch), or after `budget` if that comes first.
pub fn work_until(event_deadline_ms: u64, margin: Duration, budget: Option<Duration>) -> Instant {
    let left = (event_deadline_ms as i64 - leaderboard_rules::time::now_ms()).max(0) as u64;
    let lambda = Duration::from_millis(left).saturating_sub(margin);
    Instant::now() + budget.map_or(lambda, |b| lambda.min(b))
}

/// Why an event-driven invocation failed.
#[derive(Debug, Error)]
pub enum InvokeError {
    /// The payload is not what this function takes.
    #[error("the invocation payload is not what this function takes")]
    Payload(#[source] serde_json::Error),
    #[error(transparent)]
    Service(#[from] ServiceError),
}

impl InvokeError {
    /// The `errorType` Lambda records: the error's stable code in UpperCamelCase
    /// (`IndexUnavailable`, `BoardNotFound`, `InvalidPayload`, ...).
    pub fn error_type(&self) -> String {
        let code = match self {
            Self::Payload(_) => "invalid_payload",
            Self::Service(e) => e.code(),
        };
        code.split('_')
            .map(|w| {
                let mut c = w.chars();
                c.next()
                    .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                    .unwrap_or_default()
            })
            .collect()
    }
}

impl From<serde_json::Error> for InvokeError {
    fn from(e: serde_json::Error) -> Self {
        Self::Payload(e)
    }
}

impl From<InvokeError> for Diagnostic {
    fn from(e: InvokeError) -> Self {
        Diagnostic {
            error_type: e.error_type(),
            error_message: leaderboard_rules::error::error_chain(&e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leaderboard_core::store::IndexError;

    #[test]
    fn error_types_are_stable_names_not_rust_types() {
        let e = InvokeError::from(ServiceError::Index(IndexError::CircuitOpen));
        assert_eq!(e.error_type(), "IndexUnavailable");
        let d = Diagnostic::from(e);
        assert_eq!(d.error_type, "IndexUnavailable");
        assert!(
            d.error_message.contains("circuit breaker"),
            "{}",
            d.error_message
        );
        let bad = serde_json::from_str::<u8>("x").unwrap_err();
        assert_eq!(InvokeError::from(bad).error_type(), "InvalidPayload");
    }
}
