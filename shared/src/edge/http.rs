//! The HTTP surface (API Gateway HTTP API, payload 2.0): request decoding helpers and
//! the one mapping from [`ServiceError`] to status codes and stable error codes.
//!
//! Errors are `{"error": {"code", "message"}}`; a client never sees `Debug` output or a
//! 500 for bad input. 5xx answers are logged with their full error chain.

use aws_lambda_events::encodings::Body;
use aws_lambda_events::event::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};
use base64::Engine;
use http::HeaderValue;
use http::header::{CONTENT_TYPE, RETRY_AFTER};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::error;

use crate::caller::Caller;
use crate::error::{DomainError, error_chain};
use crate::ids::PlayerId;
use crate::service::ServiceError;

pub type Request = ApiGatewayV2httpRequest;
pub type Response = ApiGatewayV2httpResponse;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// The matched route, e.g. `GET /leaderboards/{lb}/top`.
pub fn route(req: &Request) -> &str {
    let key = req
        .request_context
        .route_key
        .as_deref()
        .or(req.route_key.as_deref())
        .unwrap_or_default();
    OPERATOR_VIEWS
        .iter()
        .find(|(view, _)| *view == key)
        .map_or(key, |(_, public)| public)
}

/// The operators' views of the players' reads (docs/console.md): each `GET /admin/view/...`
/// route is the same read as its public route, server-only (IAM) instead of a player's
/// token, so the console reads what players read, signed as an operator. A handler sees
/// the public route's key.
pub const OPERATOR_VIEWS: &[(&str, &str)] = &[
    ("GET /admin/view/leaderboards", "GET /leaderboards"),
    (
        "GET /admin/view/leaderboards/{lb}",
        "GET /leaderboards/{lb}",
    ),
    (
        "GET /admin/view/leaderboards/{lb}/top",
        "GET /leaderboards/{lb}/top",
    ),
    (
        "GET /admin/view/leaderboards/{lb}/ranks",
        "GET /leaderboards/{lb}/ranks",
    ),
    (
        "GET /admin/view/leaderboards/{lb}/players/{p}/rank",
        "GET /leaderboards/{lb}/players/{p}/rank",
    ),
    (
        "GET /admin/view/games/{game}/modes/{mode}/players/{p}/history",
        "GET /games/{game}/modes/{mode}/players/{p}/history",
    ),
    (
        "GET /admin/view/players/{p}/profile",
        "GET /players/{p}/profile",
    ),
    ("GET /admin/view/tournaments", "GET /tournaments"),
];

/// A request as API Gateway (HTTP API, payload 2.0) delivers one for `route_key` (e.g.
/// `GET /leaderboards/{lb}/top`): its path and query parameters and body. For handler
/// tests and tools.
pub fn request(
    route_key: &str,
    path: &[(&str, &str)],
    query: &[(&str, &str)],
    body: Option<&str>,
) -> Request {
    let owned = |pairs: &[(&str, &str)]| -> std::collections::HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let mut req = Request::default();
    req.route_key = Some(route_key.to_owned());
    req.request_context.route_key = Some(route_key.to_owned());
    req.path_parameters = owned(path);
    req.query_string_parameters = owned(query).into();
    req.body = body.map(str::to_owned);
    req.request_context.request_id = Some(TEST_REQUEST_ID.to_owned());
    req
}

/// The request id [`request`] gives its requests (errors carry it back).
pub const TEST_REQUEST_ID: &str = "test-request-id";

/// `req` as the JWT authorizer hands it on for a signed-in `player` (its subject). For
/// handler tests and tools.
pub fn signed_in(mut req: Request, player: &str) -> Request {
    let mut jwt = aws_lambda_events::apigw::ApiGatewayRequestAuthorizerJwtDescription::default();
    jwt.claims.insert("sub".to_owned(), player.to_owned());
    let mut authorizer = aws_lambda_events::apigw::ApiGatewayRequestAuthorizer::default();
    authorizer.jwt = Some(jwt);
    req.request_context.authorizer = Some(authorizer);
    req
}

/// A reply's JSON body (`None` if it has none or it is not JSON). For handler tests and
/// tools.
pub fn response_json(resp: &Response) -> Option<serde_json::Value> {
    match resp.body.as_ref()? {
        Body::Text(text) => serde_json::from_str(text).ok(),
        _ => None,
    }
}

/// A path parameter, validated by `parse` (one of the id types' `parse`).
pub fn path<T>(
    req: &Request,
    name: &'static str,
    parse: fn(&str) -> Result<T, DomainError>,
) -> Result<T, DomainError> {
    let raw = req
        .path_parameters
        .get(name)
        .ok_or_else(|| DomainError::invalid(name, "is missing from the path"))?;
    parse(raw)
}

/// Who is calling: the subject of the JWT the authorizer verified (a player id; an
/// unparsable subject counts as none) and the source IP.
pub fn caller(req: &Request) -> Caller {
    let ctx = &req.request_context;
    let player = ctx
        .authorizer
        .as_ref()
        .and_then(|a| a.jwt.as_ref())
        .and_then(|jwt| jwt.claims.get("sub"))
        .and_then(|sub| PlayerId::parse(sub).ok());
    Caller {
        player,
        ip: ctx.http.source_ip.clone(),
    }
}

/// Who is acting on a server-only route: the IAM principal API Gateway verified (the
/// Cognito identity an operator signed in as, else its ARN, else its caller id);
/// `unknown` when the gateway passed none.
pub fn operator(req: &Request) -> String {
    let iam = req
        .request_context
        .authorizer
        .as_ref()
        .and_then(|a| a.iam.as_ref());
    // An operator signed in to the console: the identity pool's id of that person (the
    // role's ARN names only the role all operators assume).
    let cognito = iam
        .and_then(|i| i.cognito_identity.as_ref())
        .and_then(|c| c.identity_id.as_ref())
        .map(|id| format!("cognito:{id}"));
    cognito
        .or_else(|| iam.and_then(|i| i.user_arn.clone().or_else(|| i.caller_id.clone())))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// A query-string parameter.
pub fn query<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.query_string_parameters.first(name)
}

/// Every value of a list parameter, comma-joined: payload 2.0 carries `a,b` and the
/// repeated `x=a&x=b` alike as one comma-joined value, which the event type splits.
pub fn query_list(req: &Request, name: &str) -> Option<String> {
    req.query_string_parameters
        .all(name)
        .map(|values| values.join(","))
}

/// The JSON body, at most [`MAX_BODY_BYTES`]. Bytes that are not JSON are
/// `malformed_json`; JSON of another shape than the route's (an unknown field, a wrong
/// type or enum value, a number out of its type's range, a null) is `invalid_request`
/// naming the field's path, e.g. `schedules[0].time_zone`.
pub fn json_body<T: DeserializeOwned>(req: &Request) -> Result<T, DomainError> {
    let raw = req.body.as_deref().unwrap_or_default();
    let bytes = if req.is_base64_encoded {
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|_| DomainError::invalid("body", "is not valid base64"))?
    } else {
        raw.as_bytes().to_vec()
    };
    if bytes.len() > MAX_BODY_BYTES {
        return Err(DomainError::BodyTooLarge {
            limit: MAX_BODY_BYTES,
        });
    }
    let value: serde_json::Value =
        serde_json::from_slice(&bytes).map_err(DomainError::MalformedJson)?;
    // Every route's body is an object (openapi.yaml); serde would read a struct from
    // an array too, field by position.
    if !value.is_object() {
        return Err(DomainError::invalid("body", "must be a JSON object"));
    }
    if let Some(at) = null_in(&value) {
        return Err(DomainError::invalid(
            at,
            "is null; leave a field out rather than send null",
        ));
    }
    // From the text, not the value: a score's digits are read as the client wrote them
    // (a parsed value keeps a fraction as a double; docs/decimals.md).
    let mut de = serde_json::Deserializer::from_slice(&bytes);
    serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let field = body_path(&e.path().to_string());
        let reason = shape_reason(e.inner());
        // A value's own check (an id's, a name's) names its field already.
        let last = field.rsplit(['.', ']']).next().unwrap_or_default();
        let reason = match reason.strip_prefix(last).and_then(|r| r.strip_prefix(": ")) {
            Some(rest) if !last.is_empty() => rest.to_owned(),
            _ => reason,
        };
        DomainError::invalid(field, reason)
    })
}

/// A body path as the errors name it: `schedules[0].cron`, or `body` for the whole body.
fn body_path(path: &str) -> String {
    match path {
        "" | "." => "body".to_owned(),
        p => p.to_owned(),
    }
}

/// Why JSON of the wrong shape was refused, in serde's words without the position (the
/// field says where), and an integer out of its type's range said as such (serde reads
/// an integer past 64 bits as a float and calls it one).
fn shape_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let text = match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    };
    let integer = [
        "expected u8",
        "expected u16",
        "expected u32",
        "expected u64",
        "expected i32",
        "expected i64",
    ];
    if text.starts_with("invalid type: floating point") && integer.iter().any(|t| text.ends_with(t))
        || text.starts_with("invalid value: integer")
    {
        return format!("must be a whole number in range ({text})");
    }
    text
}

/// Where `value` holds a null (its path, `body` for the whole body), if anywhere. No
/// request field is nullable (openapi.yaml): a null is refused, never read as "absent"
/// and given a default.
fn null_in(value: &serde_json::Value) -> Option<String> {
    fn path(value: &serde_json::Value) -> Option<String> {
        match value {
            serde_json::Value::Null => Some(String::new()),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| path(v).map(|at| format!("[{i}]{at}"))),
            serde_json::Value::Object(fields) => fields
                .iter()
                .find_map(|(k, v)| path(v).map(|at| format!(".{k}{at}"))),
            _ => None,
        }
    }
    path(value).map(|at| body_path(at.strip_prefix('.').unwrap_or(&at)))
}

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

/// Status and stable code for every error a client can get.
pub fn status_and_code(err: &ServiceError) -> (u16, &'static str) {
    let code = err.code();
    let status = match code {
        "invalid_request" | "malformed_json" | "invalid_cursor" => 400,
        "player_banned" | "not_your_view" | "profiles_server_only" => 403,
        "board_not_found"
        | "family_not_found"
        | "not_ranked"
        | "not_banned"
        | "not_sealed"
        | "mapping_not_found"
        | "tournament_not_found"
        | "no_cohorts"
        | "no_league" => 404,
        "window_closed"
        | "family_conflict"
        | "invalid_transition"
        | "board_conflict"
        | "board_not_active"
        | "not_sealable"
        | "mapping_conflict"
        | "idempotency_conflict"
        | "tournament_conflict"
        | "tournament_full"
        | "league_settling"
        | "tournament_not_started"
        | "tournament_ended"
        | "banned_from_tournament"
        | "not_joined"
        | "attempts_exhausted"
        | "tournament_board" => 409,
        "window_expired" => 410,
        "payload_too_large" => 413,
        "score_out_of_range"
        | "too_many_decimals"
        | "subscores_mismatch"
        | "op_not_allowed"
        | "event_ts_in_future"
        | "event_outside_window"
        | "unknown_region"
        | "dense_ranks_not_kept" => 422,
        "rate_limited" => 429,
        _ => 503,
    };
    (status, code)
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

/// The error reply for `err`; 503s carry `Retry-After: 1`, 429s the seconds until the
/// caller's window ends.
pub fn error_response(err: &ServiceError) -> Response {
    let (status, code) = status_and_code(err);
    if status >= 500 {
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
        ServiceError::RateLimited { retry_after_s } => Some(*retry_after_s),
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
/// the request in the logs. Every HTTP handler's reply passes through here.
pub fn stamped(req: &Request, mut resp: Response) -> Response {
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

/// `Ok` as a JSON reply with `status`, `Err` through [`error_response`].
pub fn respond<T: Serialize>(status: u16, result: Result<T, ServiceError>) -> Response {
    match result {
        Ok(body) => json(status, &body),
        Err(e) => error_response(&e),
    }
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

#[cfg(test)]
mod body_tests {
    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::*;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        grace_seconds: Option<u64>,
        policy: Option<Policy>,
        schedules: Option<Vec<Schedule>>,
        score: Option<Box<RawValue>>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    enum Policy {
        #[serde(rename = "BEST")]
        Best,
        #[serde(rename = "MIN")]
        Min,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Schedule {
        time_zone: String,
    }

    fn refusal(body: &str) -> (u16, serde_json::Value) {
        let req = request("POST /x", &[], &[], Some(body));
        let err = ServiceError::from(json_body::<Body>(&req).unwrap_err());
        let resp = stamped(&req, error_response(&err));
        let json = response_json(&resp).unwrap();
        (resp.status_code as u16, json["error"].clone())
    }

    #[test]
    fn json_of_the_wrong_shape_is_an_invalid_request_naming_the_field() {
        let cases = [
            (r#"{"polcy": "BEST"}"#, "polcy", "unknown field `polcy`"),
            (
                r#"{"policy": "MAX"}"#,
                "policy",
                "unknown variant `MAX`, expected `BEST` or `MIN`",
            ),
            (r#"{"grace_seconds": 1.5}"#, "grace_seconds", "whole number"),
            (
                r#"{"grace_seconds": 18446744073709551616}"#,
                "grace_seconds",
                "whole number",
            ),
            (r#"{"grace_seconds": -1}"#, "grace_seconds", "whole number"),
            (
                r#"{"schedules": [{"time_zone": "UTC"}, {"time_zone": 4}]}"#,
                "schedules[1].time_zone",
                "invalid type: integer `4`, expected a string",
            ),
            (
                r#"{"schedules": [{"time_zone": null}]}"#,
                "schedules[0].time_zone",
                "null",
            ),
            ("[1, 2]", "body", "must be a JSON object"),
            ("null", "body", "must be a JSON object"),
        ];
        for (body, field, says) in cases {
            let (status, error) = refusal(body);
            assert_eq!(
                (status, &error["code"]),
                (400, &"invalid_request".into()),
                "{body}"
            );
            assert_eq!(error["field"], field, "{body}: {error}");
            let message = error["message"].as_str().unwrap();
            assert!(message.contains(says), "{body}: {message}");
            assert!(!message.contains("line 1"), "{body}: {message}");
            assert_eq!(error["request_id"], TEST_REQUEST_ID);
        }
        // Bytes that are not JSON, and only those, are malformed.
        let (status, error) = refusal(r#"{"policy": "BEST""#);
        assert_eq!((status, &error["code"]), (400, &"malformed_json".into()));
        assert_eq!(error["field"], "body");
        // A score is still read as written.
        let req = request("POST /x", &[], &[], Some(r#"{"score": 83.4170}"#));
        let body: Body = json_body(&req).unwrap();
        assert_eq!(body.score.unwrap().get(), "83.4170");
    }

    #[test]
    fn only_error_replies_carry_the_request_id() {
        let req = request("GET /x", &[], &[], None);
        let ok = stamped(&req, json(200, &serde_json::json!({"error": "a field"})));
        assert_eq!(response_json(&ok).unwrap()["error"], "a field");
        let err = ServiceError::Contention;
        let body = response_json(&stamped(&req, error_response(&err))).unwrap();
        assert_eq!(body["error"]["request_id"], TEST_REQUEST_ID);
        assert!(body["error"].get("field").is_none(), "{body}");
    }
}

#[cfg(test)]
mod null_tests {
    use serde_json::json;

    #[test]
    fn a_null_anywhere_in_a_body_is_found_by_its_path() {
        assert_eq!(super::null_in(&json!(null)).as_deref(), Some("body"));
        assert_eq!(
            super::null_in(&json!({"a": 1, "b": [1, {"c": null}]})).as_deref(),
            Some("b[1].c")
        );
        assert_eq!(
            super::null_in(&json!({"budget_ms": null})).as_deref(),
            Some("budget_ms")
        );
        assert_eq!(super::null_in(&json!({"a": [1, "x", {"b": false}]})), None);
    }
}

#[cfg(test)]
mod operator_tests {
    use super::*;

    /// `req` as the IAM authorizer hands it on, for a console operator's temporary
    /// credentials from the identity pool when `identity` is given.
    fn signed(identity: Option<&str>) -> Request {
        let mut req = request(
            "GET /admin/view/leaderboards/{lb}/top",
            &[("lb", "g:x")],
            &[],
            None,
        );
        let iam = serde_json::json!({"iam": {
            "accountId": "111122223333",
            "callerId": "AROAEXAMPLE:CognitoIdentityCredentials",
            "userArn": "arn:aws:sts::111122223333:assumed-role/OperatorRole/CognitoIdentityCredentials",
            "cognitoIdentity": identity.map(|id| serde_json::json!({
                "amr": ["authenticated"], "identityId": id, "identityPoolId": "eu-west-1:pool"})),
        }});
        req.request_context.authorizer = Some(serde_json::from_value(iam).unwrap());
        req
    }

    #[test]
    fn an_operator_view_is_its_public_read_and_a_console_operator_is_named_by_identity() {
        let console = signed(Some("eu-west-1:7f3c"));
        assert_eq!(route(&console), "GET /leaderboards/{lb}/top");
        assert_eq!(operator(&console), "cognito:eu-west-1:7f3c");
        let server = signed(None);
        assert_eq!(
            operator(&server),
            "arn:aws:sts::111122223333:assumed-role/OperatorRole/CognitoIdentityCredentials"
        );
        assert_eq!(
            route(&request("GET /admin/audit", &[], &[], None)),
            "GET /admin/audit"
        );
        for (view, public) in OPERATOR_VIEWS {
            assert_eq!(view.replacen("/admin/view", "", 1), *public);
        }
    }
}
