//! The HTTP surface (API Gateway HTTP API, payload 2.0): the request and its decoding
//! helpers (route, parameters, who is calling). It imports neither of its neighbours:
//! the body's reading is [`crate::edge::body`], the replies, the one status mapping and
//! `routed` (every HTTP handler's body) are [`crate::edge::reply`]; both build on this.

use aws_lambda_events::encodings::Body;
use aws_lambda_events::event::apigw::{ApiGatewayV2httpRequest, ApiGatewayV2httpResponse};

use leaderboard_core::service::integrity::MAX_HELD_ID;
use leaderboard_rules::caller::Caller;
use leaderboard_rules::error::DomainError;
use leaderboard_rules::ids::{LeaderboardId, PlayerId, parse_id, parse_slug};
use leaderboard_rules::window::parse_name;

pub type Request = ApiGatewayV2httpRequest;
pub type Response = ApiGatewayV2httpResponse;

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
/// token, so the console reads what players read, signed as an operator (and a support
/// agent, whose role reads only under `/admin/`, reads a game's bans). A handler sees
/// the public route's key.
pub(crate) const OPERATOR_VIEWS: &[(&str, &str)] = &[
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
        "GET /admin/view/leaderboards/{lb}/results",
        "GET /leaderboards/{lb}/results",
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
    (
        "GET /admin/view/players/{p}/rewards",
        "GET /players/{p}/rewards",
    ),
    ("GET /admin/view/tournaments", "GET /tournaments"),
    (
        "GET /admin/view/games/{game}/bans",
        "GET /games/{game}/bans",
    ),
    (
        "GET /admin/view/tournaments/{t}/players/{p}/league",
        "GET /tournaments/{t}/players/{p}/league",
    ),
    (
        "GET /admin/view/tournaments/{t}/players/{p}/cohort",
        "GET /tournaments/{t}/players/{p}/cohort",
    ),
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
pub(crate) const TEST_REQUEST_ID: &str = "test-request-id";

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

/// A path parameter, validated by `parse` (one of the id types' `parse`); a refusal
/// names the parameter (`lb`).
pub fn path<T>(
    req: &Request,
    name: &'static str,
    parse: fn(&str) -> Result<T, DomainError>,
) -> Result<T, DomainError> {
    let raw = req
        .path_parameters
        .get(name)
        .ok_or_else(|| DomainError::invalid(name, "is missing from the path"))?;
    parse(raw).map_err(|e| e.for_field(name))
}

/// Every path parameter of `route` checked as openapi.yaml constrains it, in the
/// route's order, before anything else of the request (its body included) is read: a
/// refusal names the parameter (`lb`, `game`), whatever the handler does next.
pub fn check_path(req: &Request, route: &str) -> Result<(), DomainError> {
    let names = route
        .split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'));
    for name in names {
        let raw = req.path_parameters.get(name).map_or("", String::as_str);
        let checked = match name {
            "lb" => parse_id("lb", raw),
            "p" => parse_id("p", raw),
            "game" => parse_name("game", raw),
            "mode" => parse_name("mode", raw),
            "source" => parse_name("source", raw),
            "t" => parse_slug("t", raw),
            "o" => parse_slug("o", raw),
            "id" if raw.len() > MAX_HELD_ID => Err(DomainError::invalid(
                "id",
                format!("must be at most {MAX_HELD_ID} characters"),
            )),
            _ => Ok(String::new()),
        };
        checked?;
    }
    Ok(())
}

/// The player of a `/…/players/{p}/…` route.
pub fn player(req: &Request) -> Result<PlayerId, DomainError> {
    path(req, "p", PlayerId::parse)
}

/// The board and the player of a `/leaderboards/{lb}/players/{p}/…` route.
pub fn board_player(req: &Request) -> Result<(LeaderboardId, PlayerId), DomainError> {
    Ok((path(req, "lb", LeaderboardId::parse)?, player(req)?))
}

/// The signed-in player of a `/me/…` route (the JWT authorizer admits only players, so
/// a token without a player subject is refused naming the header).
pub fn me(req: &Request) -> Result<PlayerId, DomainError> {
    (caller(req).player)
        .ok_or_else(|| DomainError::invalid("Authorization", "the token names no player"))
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

#[cfg(test)]
mod path_tests {
    use super::*;

    #[test]
    fn path_parameters_are_checked_in_the_routes_order_and_named_by_the_parameter() {
        let field = |route: &str, path: &[(&str, &str)]| {
            let req = request(route, path, &[], Some("{}"));
            check_path(&req, route)
                .err()
                .and_then(|e| e.field().map(str::to_owned))
        };
        let both = "GET /leaderboards/{lb}/players/{p}/rank";
        assert_eq!(
            field(both, &[("lb", "a b"), ("p", "é")]).as_deref(),
            Some("lb")
        );
        assert_eq!(
            field(both, &[("lb", "a"), ("p", "é")]).as_deref(),
            Some("p")
        );
        assert_eq!(field(both, &[("lb", "a:b"), ("p", "c.d")]), None);
        let ban = "PUT /games/{game}/bans/{p}";
        assert_eq!(
            field(ban, &[("game", &"g".repeat(33)), ("p", "x")]).as_deref(),
            Some("game")
        );
        let decide = "POST /admin/held/{id}";
        assert_eq!(
            field(decide, &[("id", &"x".repeat(601))]).as_deref(),
            Some("id")
        );
        assert_eq!(field(decide, &[("id", "not-an-id")]), None);
        let league = "POST /tournaments/{t}/occurrences/{o}/league/dry-run";
        assert_eq!(
            field(league, &[("t", "t1"), ("o", "2026.W01")]).as_deref(),
            Some("o")
        );
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
