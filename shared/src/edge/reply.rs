//! Replies: JSON bodies, the one mapping from [`ServiceError`] to a status and a stable
//! code, and error replies `{"error": {"code", "message", "field", "request_id"}}`; a
//! client never sees `Debug` output or a 500 for bad input. 5xx answers are logged with
//! their full error chain.

use aws_lambda_events::encodings::Body;
use http::HeaderValue;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use serde::Serialize;
use tracing::error;

use super::http::{Request, Response, check_path, response_json, route};
use leaderboard_core::service::boards::Created;
use leaderboard_core::service::{JoinRefusal, ServiceError};
use leaderboard_rules::error::DomainError;
use leaderboard_rules::error::error_chain;

/// A JSON reply.
pub fn json<T: Serialize>(status: u16, body: &T) -> Response {
    let mut resp = Response::default();
    resp.status_code = i64::from(status);
    resp.headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    resp.body = Some(Body::Text(
        serde_json::to_string(body).unwrap_or_else(|_| "{}".to_owned()),
    ));
    resp
}

/// Status and stable code for every error a client can get. The match names every
/// variant (no fallback arm), so an error added to the service does not compile until it
/// is given its status here.
pub fn status_and_code(err: &ServiceError) -> (u16, &'static str) {
    (status(err), err.code())
}

fn status(err: &ServiceError) -> u16 {
    use ServiceError as E;
    match err {
        E::Domain(d) => domain_status(d),
        E::JoinRefused { refusal, .. } => match refusal {
            JoinRefusal::Full
            | JoinRefusal::NotStarted
            | JoinRefusal::Ended
            | JoinRefusal::Banned
            | JoinRefusal::Settling => 409,
        },
        E::PlayerBanned { .. } | E::NotYourView { .. } | E::ProfilesServerOnly => 403,
        E::BoardNotFound(_)
        | E::FamilyNotFound { .. }
        | E::NotRanked { .. }
        | E::NotBanned { .. }
        | E::NotSealed(_)
        | E::MappingNotFound(_)
        | E::TournamentNotFound(_)
        | E::NoCohorts(_)
        | E::NoLeague(_)
        | E::HeldNotFound(_)
        | E::ExportNotFound(_)
        | E::RewardNotFound(_) => 404,
        E::WindowClosed { .. }
        | E::FamilyConflict { .. }
        | E::InvalidTransition { .. }
        | E::BoardConflict(_)
        | E::BoardNotActive { .. }
        | E::NotSealable { .. }
        | E::NotResettable { .. }
        | E::MappingConflict { .. }
        | E::IdempotencyConflict(_)
        | E::TournamentConflict(_)
        | E::NotJoined { .. }
        | E::AttemptsExhausted { .. }
        | E::TournamentBoard { .. }
        | E::AlreadyDecided { .. }
        | E::HeldWindowSealed(_)
        | E::ResultRejected(_) => 409,
        E::WindowExpired(_) | E::RewardExpired { .. } => 410,
        E::EventOutsideWindow(_) | E::UnknownRegion { .. } => 422,
        E::RateLimited { .. } => 429,
        E::Contention
        | E::BoardResetting { .. }
        | E::RankUnavailable(_)
        | E::Store(_)
        | E::Index(_)
        | E::Friends(_)
        | E::DeadLetters(_) => 503,
    }
}

fn domain_status(err: &DomainError) -> u16 {
    use DomainError as D;
    match err {
        D::Invalid { .. } | D::MalformedJson(_) | D::InvalidCursor => 400,
        D::BodyTooLarge { .. } => 413,
        D::ScoreOutOfRange { .. }
        | D::TooManyDecimals { .. }
        | D::SubscoresMismatch { .. }
        | D::OpNotAllowed { .. }
        | D::EventInFuture { .. }
        | D::DenseNotKept
        | D::IntegrityRule { .. }
        | D::NotChangeable { .. }
        | D::Repeated { .. } => 422,
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

/// `{code, message, field?}`: `field` names what was refused (every 400 and 422 but a
/// body that is not JSON), as a body path (`schedules[0].time_zone`) or a parameter's
/// or header's name. [`stamped`] adds `request_id`.
#[derive(Serialize)]
struct ErrorDetail<'a> {
    code: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
}

/// One item's refusal inside a reply that answers many (a match's players): the status
/// the item would have had alone, and its `error` as an error reply writes it.
#[derive(Serialize)]
pub struct ItemRefused<'a> {
    pub status: u16,
    error: ErrorDetail<'a>,
}

impl<'a> ItemRefused<'a> {
    pub fn of(err: &'a ServiceError) -> Self {
        let (status, code) = status_and_code(err);
        Self {
            status,
            error: ErrorDetail {
                code,
                message: err.to_string(),
                field: err.field(),
            },
        }
    }
}

/// The error reply for `err`; 503s carry `Retry-After: 1`, 429s the seconds until the
/// caller's window ends.
pub fn error_response(err: &ServiceError) -> Response {
    let (status, code) = status_and_code(err);
    if status >= 500 && code != ASKED_FOR {
        error!(error = %err, chain = %error_chain(err), code, "request failed");
    }
    let mut resp = json(
        status,
        &ErrorBody {
            error: ErrorDetail {
                code,
                message: err.to_string(),
                field: err.field(),
            },
        },
    );
    let retry_after = match err {
        ServiceError::RateLimited { retry_after_s }
        | ServiceError::BoardResetting { retry_after_s, .. } => Some(*retry_after_s),
        _ if status == 503 => Some(1),
        _ => None,
    };
    if let Some(s) = retry_after {
        resp.headers.insert(RETRY_AFTER, HeaderValue::from(s));
    }
    resp
}

/// `resp` to `req` with the request's id (the one API Gateway logs, `requestContext.
/// requestId`) in its error, if it is one: a player's support ticket quoting it finds
/// the request in the logs. Every HTTP handler's reply passes through here, so here a 5xx
/// is counted (`server_error_written`).
pub fn stamped(req: &Request, mut resp: Response) -> Response {
    // Every reply: the denominator of the error rate on the console's overview.
    leaderboard_core::service::metrics::tally("Replies", 1);
    if resp.status_code >= 500 && !waits_on_a_reset(&resp) {
        server_error_written(route(req));
    }
    let Some(id) = req.request_context.request_id.as_deref() else {
        return resp;
    };
    if resp.status_code < 400 {
        return resp;
    }
    let Some(mut body) = response_json(&resp) else {
        return resp;
    };
    if let Some(error) = body.get_mut("error").and_then(|e| e.as_object_mut()) {
        error.insert("request_id".to_owned(), id.into());
        resp.body = Some(Body::Text(body.to_string()));
    }
    resp
}

/// The code of the one 503 an operator asks for rather than a fault: a result refused
/// while its board is reset. It is not logged as an error, and the error rate and its
/// alarm leave it out.
const ASKED_FOR: &str = "board_resetting";

fn waits_on_a_reset(resp: &Response) -> bool {
    response_json(resp).is_some_and(|b| b["error"]["code"] == ASKED_FOR)
}

/// Counts a 5xx reply: `ServerErrorReplies` without dimensions (what the alarm watches,
/// across every function) and by `Route` (which route, on the dashboard). Route keys are
/// unique across the functions, so a route names its function too.
fn server_error_written(route: &str) {
    leaderboard_core::service::metrics::count(&[("ServerErrorReplies", 1)]);
    leaderboard_core::service::metrics::count_by(
        "ServerErrorReplies",
        &[("Route", route.to_owned())],
        1,
    );
}

/// An HTTP handler's whole body: `answer` gives the reply to the request on its matched
/// route (see [`route`]), once its path parameters passed [`check_path`], and the reply
/// is [`stamped`]. Never an `Err`: every failure is an HTTP reply.
pub async fn routed<E>(
    event: &lambda_runtime::LambdaEvent<Request>,
    answer: impl AsyncFnOnce(&Request, &str) -> Response,
) -> Result<Response, E> {
    let req = &event.payload;
    let route = route(req);
    let reply = match check_path(req, route) {
        Ok(()) => answer(req, route).await,
        Err(e) => error_response(&e.into()),
    };
    Ok(stamped(req, reply))
}

/// A create's reply: 201 with what it made, 200 with what was already there with the
/// same settings, or the error's.
pub fn created<T: Serialize>(result: Result<Created<T>, ServiceError>) -> Response {
    match result {
        Ok(Created::New(v)) => json(201, &v),
        Ok(Created::Existing(v)) => json(200, &v),
        Err(e) => error_response(&e),
    }
}

/// `Ok` as a JSON reply with `status`, `Err` through [`error_response`].
pub fn respond<T: Serialize>(status: u16, result: Result<T, ServiceError>) -> Response {
    match result {
        Ok(body) => json(status, &body),
        Err(e) => error_response(&e),
    }
}

/// [`respond`] with what `work` comes to: a route's body written as one async block.
pub async fn reply<T: Serialize>(
    status: u16,
    work: impl Future<Output = Result<T, ServiceError>>,
) -> Response {
    respond(status, work.await)
}

/// Reply for a route this function does not serve (a template/handler mismatch).
pub fn unknown_route(req: &Request) -> Response {
    json(
        404,
        &ErrorBody {
            error: ErrorDetail {
                code: "route_not_found",
                message: format!("no handler for route {:?}", route(req)),
                field: None,
            },
        },
    )
}
