//! Server routes take what API Gateway's IAM authorization takes: a request signed with
//! SigV4 (here by the AWS SDK's own signer, `aws-sigv4`) by one of the stack's local key
//! pairs passes, on board ids with `:` (sent escaped or not), an id in UTF-8 and a query
//! string, and is then held to the template's policy of the key's principal; a wrong
//! secret, a changed body, path or query, or a date past the allowed skew is refused 403
//! before any function runs, and changes nothing.

use std::time::{Duration, SystemTime};

use anyhow::{Context as _, Result, ensure};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::Stack;

/// The local stack's key pairs (infra/local/sigv4.py, docs/operations.md).
const GAME_SERVER: (&str, &str) = ("AKIALOCALGAMESERVER0", "local-game-server-secret");
const OPERATOR: (&str, &str) = ("AKIALOCALOPERATOR000", "local-operator-secret");
const SUPPORT: (&str, &str) = ("AKIALOCALSUPPORT0000", "local-support-secret");

/// The headers SigV4 adds to `method url` with `body`, signed by `key` at `at` for
/// execute-api in the stack's region.
fn signed(
    method: &Method,
    url: &str,
    body: &[u8],
    key: (&str, &str),
    at: SystemTime,
) -> Result<Vec<(String, String)>> {
    let identity = aws_credential_types::Credentials::new(key.0, key.1, None, None, "e2e").into();
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("execute-api")
        .time(at)
        .settings(SigningSettings::default())
        .build()?
        .into();
    let host = url.split('/').nth(2).context("the URL names no host")?;
    let headers = [("content-type", "application/json"), ("host", host)];
    let request = SignableRequest::new(
        method.as_str(),
        url,
        headers.into_iter(),
        SignableBody::Bytes(body),
    )?;
    let (instructions, _) = sign(request, &params)?.into_parts();
    Ok(instructions
        .headers()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect())
}

/// Sends `body` to `target` (path and query, exactly as written) with `headers`.
async fn send(
    stack: &Stack,
    method: Method,
    target: &str,
    body: &[u8],
    headers: &[(String, String)],
) -> Result<(u16, Value)> {
    let mut req = stack
        .http
        .request(method, format!("{}{target}", stack.api))
        .header("content-type", "application/json")
        .body(body.to_vec());
    for (k, v) in headers {
        if k != "host" {
            req = req.header(k, v);
        }
    }
    let resp = req.send().await?;
    let status = resp.status().as_u16();
    let text = resp.text().await?;
    Ok((
        status,
        serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?,
    ))
}

/// Signs and sends in one step.
async fn signed_call(
    stack: &Stack,
    method: Method,
    target: &str,
    body: &[u8],
    key: (&str, &str),
) -> Result<(u16, Value)> {
    let headers = signed(
        &method,
        &format!("{}{target}", stack.api),
        body,
        key,
        SystemTime::now(),
    )?;
    send(stack, method, target, body, &headers).await
}

/// What a case sends: its name, target, body and headers.
type Tampered = (&'static str, String, Vec<u8>, Vec<(String, String)>);

fn score(s: i64, m: &str) -> Vec<u8> {
    json!({"new_score": s, "match_id": m})
        .to_string()
        .into_bytes()
}

#[tokio::test]
async fn a_signed_call_passes_on_colons_utf8_and_queries_and_is_held_to_its_keys_policy()
-> Result<()> {
    let stack = Stack::start(&crate::support::redis_url()).await?;
    let lb = stack.create_board("arena:signed").await?;
    let escaped = lb.replace(':', "%3A");

    // The game server's key: a result on a board id with `:`, escaped as the SDKs send
    // it, and as sent raw by a client that does not escape it; a player id in UTF-8 (é,
    // percent-encoded) passes the signature and reaches the function, which refuses the
    // id itself: a 400 naming it, not a 403.
    let results = [
        (
            "escaped",
            format!("/leaderboards/{escaped}/players/p1/score"),
            200,
        ),
        ("raw", format!("/leaderboards/{lb}/players/p2/score"), 200),
        (
            "utf-8 id",
            format!("/leaderboards/{escaped}/players/%C3%A9l%C3%A8ve/score"),
            400,
        ),
    ];
    for (what, target, want) in results {
        let (status, body) =
            signed_call(&stack, Method::POST, &target, &score(10, "m1"), GAME_SERVER).await?;
        let outcome = match want {
            200 => body["update_applied"] == true,
            _ => body["error"]["field"] == "p",
        };
        ensure!(status == want && outcome, "{what}: {status} {body}");
    }

    // The operator's and support's keys: a read with a query string (a comma, a space and
    // UTF-8 in a value, a repeated parameter).
    for key in [OPERATOR, SUPPORT] {
        let (status, body) = signed_call(
            &stack,
            Method::GET,
            "/admin/players?name_prefix=%C3%89lo%C3%AFse%2C%20J&limit=5",
            b"",
            key,
        )
        .await?;
        ensure!(status == 200, "{}: {status} {body}", key.0);
    }

    // Each key is held to its principal's policy in template.yaml.
    let refused = [
        (
            GAME_SERVER,
            Method::POST,
            "/leaderboards".to_owned(),
            json!({"leaderboard_id": "x", "policy": "BEST"}),
        ),
        (
            GAME_SERVER,
            Method::PUT,
            "/games/g1/bans/p1".to_owned(),
            json!({"reason": "cheat"}),
        ),
        (
            SUPPORT,
            Method::POST,
            format!("/leaderboards/{escaped}/players/p1/score"),
            json!({"new_score": 99, "match_id": "m9"}),
        ),
        (OPERATOR, Method::POST, "/scores".to_owned(), json!({})),
    ];
    for (key, method, target, body) in refused {
        let (status, reply) = signed_call(
            &stack,
            method.clone(),
            &target,
            body.to_string().as_bytes(),
            key,
        )
        .await?;
        let message = reply["message"].as_str().unwrap_or_default();
        ensure!(
            status == 403 && message.contains("is not authorized to perform: execute-api:Invoke"),
            "{} {method} {target}: {status} {reply}",
            key.0
        );
    }
    let (status, body) = stack
        .get(&format!("/leaderboards/{lb}/players/p1/rank"))
        .await?;
    ensure!(status == 200 && body["score"] == 10, "{status} {body}");
    Ok(())
}

#[tokio::test]
async fn a_wrong_secret_a_changed_body_path_or_query_or_a_stale_date_is_refused_403() -> Result<()>
{
    let stack = Stack::start(&crate::support::redis_url()).await?;
    let lb = stack
        .create_board("arena:tamper")
        .await?
        .replace(':', "%3A");
    let target = format!("/leaderboards/{lb}/players/p1/score");
    let url = format!("{}{target}", stack.api);
    let now = SystemTime::now();
    // The first result as signed by `key` at `at`.
    let sign_as =
        |key: (&str, &str), at: SystemTime| signed(&Method::POST, &url, &score(10, "m1"), key, at);
    let good = sign_as(GAME_SERVER, now)?;

    let cases: [Tampered; 7] = [
        (
            "a wrong secret",
            target.clone(),
            score(10, "m1"),
            sign_as((GAME_SERVER.0, "guessed"), now)?,
        ),
        (
            "a changed body",
            target.clone(),
            score(1_000_000, "m1"),
            good.clone(),
        ),
        (
            "a changed path",
            target.replace("/p1/", "/p2/"),
            score(10, "m1"),
            good.clone(),
        ),
        (
            "a query added",
            format!("{target}?limit=1"),
            score(10, "m1"),
            good.clone(),
        ),
        (
            "a stale date (6 minutes old)",
            target.clone(),
            score(10, "m1"),
            sign_as(GAME_SERVER, now - Duration::from_secs(360))?,
        ),
        (
            "an unknown key",
            target.clone(),
            score(10, "m1"),
            sign_as(("AKIANOBODY0000000000", GAME_SERVER.1), now)?,
        ),
        (
            "another service's signature",
            target.clone(),
            score(10, "m1"),
            good.iter()
                .map(|(k, v)| (k.clone(), v.replace("/execute-api/", "/lambda/")))
                .collect(),
        ),
    ];
    for (what, target, body, headers) in cases {
        let (status, reply) = send(&stack, Method::POST, &target, &body, &headers).await?;
        ensure!(
            status == 403 && reply["message"].is_string(),
            "{what}: {status} {reply}"
        );
    }
    // Nothing reached the board.
    let (status, body) = stack.get(&format!("/leaderboards/{lb}/top?n=10")).await?;
    ensure!(
        status == 200 && body["entries"] == json!([]),
        "{status} {body}"
    );

    // The signature as made: accepted once, within the skew (four minutes old).
    let recent = sign_as(GAME_SERVER, now - Duration::from_secs(240))?;
    let (status, reply) = send(&stack, Method::POST, &target, &score(10, "m1"), &recent).await?;
    ensure!(
        status == 200 && reply["update_applied"] == true,
        "{status} {reply}"
    );
    Ok(())
}
