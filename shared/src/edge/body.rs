//! A request's JSON body: at most [`MAX_BODY_BYTES`], an object, no `null`, read into the
//! route's type from its text (a score's digits as written). What it refuses names the
//! field: bytes that are not JSON are `malformed_json`, JSON of another shape
//! `invalid_request` with the field's path (`schedules[0].time_zone`).

use std::collections::BTreeMap;

use base64::Engine;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use super::http::Request;
use leaderboard_rules::error::DomainError;

/// Largest request body accepted.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// Largest body of `POST /matches`: 100 players' results, each with up to 512 bytes of
/// metadata.
pub const MAX_MATCH_BODY_BYTES: usize = 128 * 1024;

/// The JSON body, at most [`MAX_BODY_BYTES`]. Bytes that are not JSON are
/// `malformed_json`; JSON of another shape than the route's (an unknown field, a wrong
/// type or enum value, a number out of its type's range, a null) is `invalid_request`
/// naming the field's path, e.g. `schedules[0].time_zone`.
pub fn json_body<T: DeserializeOwned>(req: &Request) -> Result<T, DomainError> {
    json_body_within(req, MAX_BODY_BYTES)
}

/// [`json_body`] of at most `limit` bytes.
pub fn json_body_within<T: DeserializeOwned>(
    req: &Request,
    limit: usize,
) -> Result<T, DomainError> {
    let raw = req.body.as_deref().unwrap_or_default();
    let bytes = if req.is_base64_encoded {
        base64::engine::general_purpose::STANDARD
            .decode(raw)
            .map_err(|_| DomainError::invalid("body", "is not valid base64"))?
    } else {
        raw.as_bytes().to_vec()
    };
    if bytes.len() > limit {
        return Err(DomainError::BodyTooLarge { limit });
    }
    // Checked as text, not parsed into values: a number is JSON whatever its size
    // (`1e400` is past a double, not malformed), and its field's own type decides.
    let value: &RawValue = serde_json::from_slice(&bytes).map_err(DomainError::MalformedJson)?;
    // Every route's body is an object (openapi.yaml); serde would read a struct from
    // an array too, field by position.
    if !value.get().starts_with('{') {
        return Err(DomainError::invalid("body", "must be a JSON object"));
    }
    if let Some(at) = null_in(value) {
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
/// and given a default. Walked as text (`value` is valid JSON already).
fn null_in(value: &RawValue) -> Option<String> {
    fn path(value: &RawValue) -> Option<String> {
        let text = value.get();
        match text.as_bytes().first() {
            Some(b'n') => Some(String::new()),
            Some(b'[') => serde_json::from_str::<Vec<&RawValue>>(text)
                .ok()?
                .into_iter()
                .enumerate()
                .find_map(|(i, v)| path(v).map(|at| format!("[{i}]{at}"))),
            Some(b'{') => serde_json::from_str::<BTreeMap<String, &RawValue>>(text)
                .ok()?
                .into_iter()
                .find_map(|(k, v)| path(v).map(|at| format!(".{k}{at}"))),
            _ => None,
        }
    }
    path(value).map(|at| body_path(at.strip_prefix('.').unwrap_or(&at)))
}

#[cfg(test)]
mod body_tests {
    use serde::Deserialize;
    use serde_json::value::RawValue;

    use super::*;
    use crate::edge::http::{TEST_REQUEST_ID, request, response_json};
    use crate::edge::reply::{error_response, json, stamped};
    use leaderboard_core::service::ServiceError;

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
        // A number past a double is JSON: its field's type decides (a whole number
        // here; a score reads its digits, and refuses them as out of its range).
        let (status, error) = refusal(r#"{"grace_seconds": 1e400}"#);
        assert_eq!((status, &error["code"]), (400, &"invalid_request".into()));
        assert_eq!(error["field"], "grace_seconds", "{error}");
        let req = request("POST /x", &[], &[], Some(r#"{"score": -1e400}"#));
        let body: Body = json_body(&req).unwrap();
        assert_eq!(body.score.unwrap().get(), "-1e400");
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
    use serde_json::value::RawValue;

    fn null_in(text: &str) -> Option<String> {
        super::null_in(serde_json::from_str::<&RawValue>(text).unwrap())
    }

    #[test]
    fn a_null_anywhere_in_a_body_is_found_by_its_path() {
        assert_eq!(null_in("null").as_deref(), Some("body"));
        assert_eq!(
            null_in(r#"{"a": 1, "b": [1, {"c": null}]}"#).as_deref(),
            Some("b[1].c")
        );
        assert_eq!(
            null_in(r#"{"budget_ms": null}"#).as_deref(),
            Some("budget_ms")
        );
        assert_eq!(null_in(r#"{"a": [1, "x", {"b": false}]}"#), None);
        assert_eq!(
            null_in(r#"{"a": 1e400, "b": {"c\"d": null}}"#).as_deref(),
            Some("b.c\"d")
        );
    }
}
