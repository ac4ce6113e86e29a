//! `openapi.yaml` as the stack serves it (`/openapi.json`), read by the walks that hold
//! the service to it (`contract`, `parameters`): its operations, each one's parameters,
//! and a valid value for each parameter the walks must fill in.

use reqwest::Method;
use serde_json::Value;

/// One parameter of an operation, its `$ref` followed.
pub struct Param {
    /// `path` or `query`.
    pub at: String,
    pub name: String,
    pub schema: Value,
    pub required: bool,
}

/// One operation of the document.
pub struct Operation {
    pub method: Method,
    /// The path as the document writes it (`/leaderboards/{lb}/top`).
    pub template: String,
    pub op: Value,
    /// Its own parameters and its path's.
    pub params: Vec<Param>,
}

/// Every operation of `doc`, in the document's order.
pub fn operations(doc: &Value) -> Vec<Operation> {
    let mut out = Vec::new();
    for (template, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, op) in item.as_object().into_iter().flatten() {
            if method == "parameters" {
                continue;
            }
            if let Ok(verb) = method.to_uppercase().parse::<Method>() {
                out.push(Operation {
                    method: verb,
                    template: template.clone(),
                    op: op.clone(),
                    params: parameters(doc, item, op),
                });
            }
        }
    }
    out
}

fn parameters(doc: &Value, item: &Value, op: &Value) -> Vec<Param> {
    let resolve = |p: &Value| match p["$ref"].as_str() {
        Some(r) => {
            doc["components"]["parameters"][r.rsplit('/').next().unwrap_or_default()].clone()
        }
        None => p.clone(),
    };
    (item["parameters"].as_array().into_iter().flatten())
        .chain(op["parameters"].as_array().into_iter().flatten())
        .map(resolve)
        .map(|p| Param {
            at: p["in"].as_str().unwrap_or_default().to_owned(),
            name: p["name"].as_str().unwrap_or_default().to_owned(),
            schema: p["schema"].clone(),
            required: p["required"].as_bool().unwrap_or(false),
        })
        .collect()
}

/// A value the document takes for each path parameter and required query parameter
/// (`board`: the walk's own board).
pub fn valid(name: &str, board: &str) -> String {
    match name {
        "lb" => board.to_owned(),
        "p" => "p1".to_owned(),
        "game" => "g1".to_owned(),
        "mode" => "m".to_owned(),
        "t" => "t1".to_owned(),
        "o" => "2026-W01".to_owned(),
        "source" => "s1".to_owned(),
        // A held result's id (none is waiting: a decision answers 404).
        "id" => format!("g1~0000000000001~{board}~p1~m1"),
        "players" => "p1".to_owned(),
        "name_prefix" => "a".to_owned(),
        other => panic!("a parameter the walks have no valid value for: {other}"),
    }
}
