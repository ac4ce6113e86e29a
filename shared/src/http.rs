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
    req
}

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

/// The JSON body, at most [`MAX_BODY_BYTES`].
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
    if let Some(at) = null_in(&value) {
        return Err(DomainError::invalid(
            "body",
            format!("{at} is null; leave a field out rather than send null"),
        ));
    }
    // From the text, not the value: a score's digits are read as the client wrote them
    // (a parsed value keeps a fraction as a double; docs/decimals.md).
    serde_json::from_slice(&bytes).map_err(DomainError::MalformedJson)
}

/// Where `value` holds a null (a JSON pointer, `/` for the whole body), if anywhere. No
/// request field is nullable (openapi.yaml): a null is refused, never read as "absent"
/// and given a default.
fn null_in(value: &serde_json::Value) -> Option<String> {
    fn pointer(value: &serde_json::Value) -> Option<String> {
        match value {
            serde_json::Value::Null => Some(String::new()),
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, v)| pointer(v).map(|at| format!("/{i}{at}"))),
            serde_json::Value::Object(fields) => fields
                .iter()
                .find_map(|(k, v)| pointer(v).map(|at| format!("/{k}{at}"))),
            _ => None,
        }
    }
    pointer(value).map(|at| match at.is_empty() {
        true => "/".to_owned(),
        false => at,
    })
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

#[derive(Serialize)]
struct ErrorDetail<'a> {
    code: &'a str,
    message: String,
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
            },
        },
    )
}

#[cfg(test)]
mod null_tests {
    use serde_json::json;

    #[test]
    fn a_null_anywhere_in_a_body_is_found_by_its_pointer() {
        assert_eq!(super::null_in(&json!(null)).as_deref(), Some("/"));
        assert_eq!(
            super::null_in(&json!({"a": 1, "b": [1, {"c": null}]})).as_deref(),
            Some("/b/1/c")
        );
        assert_eq!(
            super::null_in(&json!({"budget_ms": null})).as_deref(),
            Some("/budget_ms")
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
