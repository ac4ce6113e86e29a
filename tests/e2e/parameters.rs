//! The document's parameters against what the handlers take: every query and path
//! parameter that `openapi.yaml` constrains (a pattern, a length, an enum, a range, a
//! type) is sent values the constraint refuses, one at a time with every other
//! parameter valid, and each must be a 400 naming that parameter (`error.field`); a
//! cursor a read did not issue is `invalid_cursor`. And every operators' view
//! (`/admin/view/...`) answers exactly as its public twin.

use anyhow::Result;
use serde_json::{Value, json};

use crate::support::{self, API_KEY, Operation, Stack, bearer, valid};

/// The schema `s` with its `$ref` followed.
fn resolved<'a>(doc: &'a Value, s: &'a Value) -> &'a Value {
    match s["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap_or_default();
            resolved(doc, &doc["components"]["schemas"][name])
        }
        None => s,
    }
}

/// The longest run a pattern's bounded repetitions allow (`{1,32}` gives 32; the
/// largest of several, as `{1,2}` in a look-ahead bounds no value).
fn pattern_bound(pattern: &str) -> Option<usize> {
    (pattern.split("{1,").skip(1))
        .filter_map(|rest| rest.split_once('}')?.0.parse().ok())
        .max()
}

/// A snowman, percent-encoded: outside every pattern of the document (all ASCII).
const FOREIGN: &str = "%E2%98%83";

/// Values the schema `s` refuses, each with what it breaks; `at` is `path` or `query`
/// (an empty path segment routes elsewhere, so a path is never sent one). Panics on a
/// constraint the walk does not know, so a new kind is taught here before it ships.
fn refused(doc: &Value, s: &Value, at: &str) -> Vec<(String, String)> {
    let s = resolved(doc, s);
    let mut out: Vec<(String, String)> = Vec::new();
    let mut put = |what: &str, v: String| out.push((what.to_owned(), v));
    if let Some(branches) = s["anyOf"].as_array().or(s["oneOf"].as_array()) {
        // A string no branch takes: every branch of the document's is an ASCII pattern
        // or enum.
        for b in branches {
            let b = resolved(doc, b);
            assert!(
                b["pattern"].is_string() || b["enum"].is_array(),
                "a branch the walk cannot refuse: {b}"
            );
        }
        put("outside every branch", FOREIGN.to_owned());
        return out;
    }
    let known = [
        "type",
        "pattern",
        "enum",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "default",
        "description",
        "format",
    ];
    if let Some(k) = s
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
        .find(|k| !known.contains(&k.as_str()))
    {
        panic!("a constraint the walk does not know: {k} in {s}");
    }
    match s["type"].as_str() {
        Some("integer") | Some("number") => {
            put("not a number", "x".to_owned());
            if let Some(min) = s["minimum"].as_i64() {
                put("below the minimum", (i128::from(min) - 1).to_string());
            }
            if let Some(max) = s["maximum"].as_i64() {
                put("above the maximum", (i128::from(max) + 1).to_string());
            }
        }
        Some("boolean") => put("not a boolean", "maybe".to_owned()),
        Some("string") => {
            if s["enum"].is_array() {
                put("not in the enum", "zz_not_listed".to_owned());
            }
            if let Some(p) = s["pattern"].as_str() {
                put("outside the pattern", FOREIGN.to_owned());
                if let Some(n) = pattern_bound(p) {
                    put("longer than the pattern", "x".repeat(n + 1));
                    if at == "query" {
                        put("empty", String::new());
                    }
                }
            }
            if let Some(n) = s["maxLength"].as_u64() {
                put("longer than maxLength", "x".repeat(n as usize + 1));
            }
            if s["minLength"].as_u64().is_some_and(|n| n >= 1) && at == "query" {
                put("shorter than minLength", String::new());
            }
        }
        other => panic!("a parameter type the walk does not know: {other:?} in {s}"),
    }
    out
}

#[tokio::test]
async fn every_constrained_parameter_refuses_a_value_outside_it_with_a_400_naming_it() -> Result<()>
{
    let (stack, board) = Stack::with_board("params").await?;
    stack.post_score(&board, "p1", "m1", 10).await?;
    let (status, doc) = stack.get("/openapi.json").await?;
    assert_eq!(status, 200);
    let (mut broken, mut sent, mut checked) = (Vec::new(), 0, 0);
    for operation in support::operations(&doc) {
        let Operation {
            method: verb,
            template,
            op,
            params,
        } = &operation;
        // The body, where there is one: the walk is about the parameters, which are
        // checked before it, so any body will do.
        let body = op.get("requestBody").map(|_| "{}".to_owned());
        for param in params {
            let (at, name) = (&param.at, &param.name);
            let refusals = refused(&doc, &param.schema, at);
            let mut values = refusals.clone();
            if name == "cursor" {
                values.push(("not a cursor".into(), "not-a-cursor!!".into()));
            }
            checked += usize::from(!values.is_empty());
            for (what, bad) in values {
                let mut path = template.clone();
                let mut query = Vec::new();
                for other in params {
                    let (a, n) = (&other.at, &other.name);
                    let value = if n == name && a == at {
                        bad.clone()
                    } else if a == "path" || other.required {
                        valid(n, &board)
                    } else {
                        continue;
                    };
                    match a.as_str() {
                        "path" => path = path.replace(&format!("{{{n}}}"), &value),
                        _ => query.push(format!("{n}={value}")),
                    }
                }
                let url = match query.is_empty() {
                    true => format!("{}{path}", stack.api),
                    false => format!("{}{path}?{}", stack.api, query.join("&")),
                };
                let mut req = (stack.http.request(verb.clone(), url))
                    .header("x-api-key", API_KEY)
                    .header("authorization", bearer("p1"));
                if let Some(b) = &body {
                    req = req
                        .header("content-type", "application/json")
                        .body(b.clone());
                }
                let resp = req.send().await?;
                sent += 1;
                let status = resp.status().as_u16();
                let reply: Value = serde_json::from_str(&resp.text().await?).unwrap_or(json!({}));
                let seen = format!(
                    "{} {template}: {at} {name} {what} ({bad:.16}): {status} {reply}",
                    verb.as_str()
                );
                let error = &reply["error"];
                if status != 400 || error["field"] != json!(name) {
                    broken.push(seen);
                } else if name == "cursor" && error["code"] != "invalid_cursor" {
                    broken.push(format!("not invalid_cursor: {seen}"));
                }
            }
        }
    }
    println!("{checked} constrained parameters, {sent} requests");
    assert!(
        checked >= 100,
        "the walk found {checked} constrained parameters"
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    Ok(())
}

/// A reply without what differs between two reads of the same data: when and where
/// from it was answered, and the request's id.
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        for k in ["as_of", "source", "stale_ms"] {
            o.remove(k);
        }
        if let Some(e) = o.get_mut("error").and_then(Value::as_object_mut) {
            e.remove("request_id");
        }
    }
    v
}

#[tokio::test]
async fn every_operator_view_answers_as_its_public_twin() -> Result<()> {
    let (stack, board) = Stack::with_board("views").await?;
    for (p, score) in [("p1", 10), ("p2", 20), ("p3", 30)] {
        stack.post_score(&board, p, "m1", score).await?;
    }
    let (_, doc) = stack.get("/openapi.json").await?;
    let (mut broken, mut views) = (Vec::new(), 0);
    for Operation {
        method: verb,
        template,
        params,
        ..
    } in support::operations(&doc)
    {
        let Some(public) = template.strip_prefix("/admin/view") else {
            continue;
        };
        views += 1;
        if doc["paths"][public][verb.as_str().to_lowercase()].is_null() {
            broken.push(format!(
                "{template}: no public twin {public} in the document"
            ));
            continue;
        }
        let mut path = public.to_owned();
        for p in params.iter().filter(|p| p.at == "path") {
            path = path.replace(&format!("{{{}}}", p.name), &valid(&p.name, &board));
        }
        // The public read as a player who is on no board (so no row is theirs), the
        // view as an operator; a public route that is itself server-only (a game's
        // bans, twinned for the support role) as an operator too.
        let token = bearer("viewer");
        let player = [("authorization", token.as_str())];
        let operator = [("x-api-key", API_KEY)];
        let security = &doc["paths"][public][verb.as_str().to_lowercase()]["security"];
        let server_only = (security.as_array()).is_some_and(|s| {
            s.iter()
                .all(|x| x.get("sigv4").is_some() || x.get("localKey").is_some())
        });
        let public_as: &[(&str, &str)] = if server_only { &operator } else { &player };
        let (s1, _, b1) = stack.get_with(&path, public_as).await?;
        let (s2, _, b2) = (stack.get_with(&format!("/admin/view{path}"), &operator)).await?;
        let twins = format!("{template} {s2} {b2} / {public} {s1} {b1}");
        if s1 != s2 || comparable(b1.clone()) != comparable(b2.clone()) {
            broken.push(format!("answers differ: {twins}"));
        }
        if b2["error"]["code"] == "route_not_found" || b1["error"]["code"] == "route_not_found" {
            broken.push(format!("no handler: {twins}"));
        }
        // The board's own reads answer for the board the walk wrote to (its results
        // once a window of it is sealed: this board is all-time).
        let unsealed = b2["error"]["code"] == "not_sealed";
        if template.contains("{lb}") && s2 != 200 && !unsealed {
            broken.push(format!(
                "a view of a board with results did not answer: {twins}"
            ));
        }
    }
    println!("{views} operators' views");
    assert!(views >= 11, "the walk found {views} views");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    Ok(())
}
