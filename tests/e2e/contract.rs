//! The document's statuses against what the handlers answer: every operation
//! of `openapi.yaml` (as the stack serves it) is sent the requests any client can get
//! wrong — each path parameter outside its pattern, each query parameter malformed, a
//! body that is not JSON, of the wrong shape, empty or too large, no credentials — and
//! every answer's status must be one the operation documents. Every error carries its
//! request id, and every 400 and 422 names its field.
//!
//! The stack checks every reply against the document too (`--check-openapi`: a reply
//! that breaks it becomes a 500, which no operation documents).

use std::collections::BTreeSet;

use anyhow::Result;
use serde_json::{Value, json};

use crate::support::{self, API_KEY, Operation, Param, Stack, bearer, valid};

/// One request the walk sends, and what it answered.
struct Probe {
    what: String,
    path: String,
    query: String,
    body: Option<String>,
    auth: bool,
}

/// The requests sent to one operation.
fn probes(template: &str, params: &[Param], body: bool, board: &str) -> Vec<Probe> {
    let path_with = |bad: Option<(&str, &str)>| {
        let mut path = template.to_owned();
        for Param { name, .. } in params.iter().filter(|p| p.at == "path") {
            let value = match bad {
                Some((n, v)) if n == name => v.to_owned(),
                _ => valid(name, board),
            };
            path = path.replace(&format!("{{{name}}}"), &value);
        }
        path
    };
    let plain = if body { Some("{}".to_owned()) } else { None };
    let probe = |what: String, path: String, query: &str, body: Option<String>| Probe {
        what,
        path,
        query: query.to_owned(),
        body,
        auth: true,
    };
    let mut out = vec![probe(
        "as documented".into(),
        path_with(None),
        "",
        plain.clone(),
    )];
    for Param { name, .. } in params.iter().filter(|p| p.at == "path") {
        let long = "x".repeat(129);
        for bad in ["%C2%84", "a%20b", long.as_str()] {
            let what = format!("path {name}={bad:.12}");
            out.push(probe(what, path_with(Some((name, bad))), "", plain.clone()));
        }
    }
    for Param { name, .. } in params.iter().filter(|p| p.at == "query") {
        for bad in ["x", "-1", "99999999999999999999999", "", "%C2%84"] {
            let query = format!("{name}={bad}");
            out.push(probe(
                format!("query {query}"),
                path_with(None),
                &query,
                plain.clone(),
            ));
        }
    }
    if body {
        let large = format!(r#"{{"pad": "{}"}}"#, "x".repeat(17 * 1024));
        for (what, text) in [
            ("not JSON", "{nope".to_owned()),
            ("an array", "[1]".to_owned()),
            ("an unknown field", r#"{"zz_unknown": 1}"#.to_owned()),
            ("a null", r#"{"zz_unknown": null}"#.to_owned()),
            ("too large", large),
        ] {
            out.push(probe(
                format!("body {what}"),
                path_with(None),
                "",
                Some(text),
            ));
        }
    }
    out.push(Probe {
        auth: false,
        ..probe("no credentials".into(), path_with(None), "", plain)
    });
    out
}

#[tokio::test]
async fn every_status_an_operation_answers_is_one_it_documents() -> Result<()> {
    let (stack, board) = Stack::with_board("contract").await?;
    stack.post_score(&board, "p1", "m1", 10).await?;
    let (status, doc) = stack.get("/openapi.json").await?;
    assert_eq!(status, 200);
    let mut broken = Vec::new();
    let mut sent = 0;
    let mut operations = 0;
    for Operation {
        method: verb,
        template,
        op,
        params,
    } in support::operations(&doc)
    {
        operations += 1;
        let documented: BTreeSet<u16> = (op["responses"].as_object().into_iter().flatten())
            .filter_map(|(code, _)| code.parse().ok())
            .collect();
        let body = op.get("requestBody").is_some();
        let name = format!("{} {template}", verb.as_str());
        // What every handler of this shape can answer, whatever the probes reach: a
        // backend down (503), no credentials (401), a refused parameter or body (400),
        // a body too large (413).
        let mut must = vec![401, 503];
        if body || !params.is_empty() {
            must.push(400);
        }
        if body {
            must.push(413);
        }
        for code in must {
            if !documented.contains(&code) {
                broken.push(format!("{name}: {code} is not documented"));
            }
        }
        for p in probes(&template, &params, body, &board) {
            sent += 1;
            let url = match p.query.is_empty() {
                true => format!("{}{}", stack.api, p.path),
                false => format!("{}{}?{}", stack.api, p.path, p.query),
            };
            let mut req = stack.http.request(verb.clone(), url);
            if p.auth {
                req = req
                    .header("x-api-key", API_KEY)
                    .header("authorization", bearer("p1"));
            }
            if let Some(b) = &p.body {
                req = req
                    .header("content-type", "application/json")
                    .body(b.clone());
            }
            let resp = req.send().await?;
            let status = resp.status().as_u16();
            let reply: Value = serde_json::from_str(&resp.text().await?).unwrap_or(json!({}));
            let seen = format!("{name} ({}): {status} {reply}", p.what);
            if !documented.contains(&status) {
                broken.push(format!("undocumented status: {seen}"));
                continue;
            }
            let error = &reply["error"];
            if status >= 400 && error.is_object() && !error["request_id"].is_string() {
                broken.push(format!("an error without its request id: {seen}"));
            }
            if matches!(status, 400 | 422) && error["field"].as_str().is_none_or(|f| f.is_empty()) {
                broken.push(format!("a {status} that names no field: {seen}"));
            }
        }
    }
    println!("{operations} operations, {sent} requests");
    assert!(operations >= 50, "the walk found {operations} operations");
    assert!(broken.is_empty(), "{}", broken.join("\n"));
    Ok(())
}
