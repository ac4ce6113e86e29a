//! The local API Gateway as a client meets it: player routes take a token only when API
//! Gateway's JWT authorizer would (an RS256 signature by a key of the issuer's JWKS, expiry,
//! issuer, audience), its subject
//! reaching the function as the caller; methods no route declares get JSON, never the
//! HTTP server's 501 page.

use anyhow::{Result, ensure};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{JWT_AUDIENCE, Stack, bearer, token_with};

/// GET `path` with `authorization` (none: no header): status, `www-authenticate`, body.
async fn get(
    stack: &Stack,
    path: &str,
    authorization: Option<&str>,
) -> Result<(u16, String, Value)> {
    let headers: Vec<(&str, &str)> = authorization
        .map(|a| ("authorization", a))
        .into_iter()
        .collect();
    let (status, head, body) = stack.get_with(path, &headers).await?;
    let challenge = head
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    Ok((status, challenge, body))
}

#[tokio::test]
async fn player_routes_take_only_the_tokens_api_gateway_would() -> Result<()> {
    let (stack, lb) = Stack::with_board("jwt").await?;
    stack.post_score(&lb, "alice", "m1", 10).await?;
    let path = format!("/leaderboards/{lb}/players/alice/rank");
    let now = chrono::Utc::now().timestamp();

    // Refused before any function runs: 401 {"message":"Unauthorized"}, the reason in
    // www-authenticate as API Gateway words it.
    let refused = [
        ("no token", None, "Bearer"),
        (
            "not a JWT",
            Some("Bearer abc".to_owned()),
            "not a valid JWT",
        ),
        (
            "expired",
            Some(format!(
                "Bearer {}",
                token_with("alice", json!({"exp": now - 5}))
            )),
            "the token has expired",
        ),
        (
            "no expiry",
            Some(format!(
                "Bearer {}",
                token_with("alice", json!({"exp": null}))
            )),
            "does not have an expiration time",
        ),
        (
            "not yet valid",
            Some(format!(
                "Bearer {}",
                token_with("alice", json!({"nbf": now + 600}))
            )),
            "not valid yet",
        ),
        (
            "another issuer",
            Some(format!(
                "Bearer {}",
                token_with("alice", json!({"iss": "https://evil.example"}))
            )),
            "does not have a valid issuer",
        ),
        (
            "another audience",
            Some(format!(
                "Bearer {}",
                token_with("alice", json!({"aud": "other-game"}))
            )),
            "does not have a valid audience",
        ),
    ];
    for (what, auth, reason) in refused {
        let (status, challenge, body) = get(&stack, &path, auth.as_deref()).await?;
        ensure!(status == 401, "{what}: {status} {body}");
        ensure!(body == json!({"message": "Unauthorized"}), "{what}: {body}");
        ensure!(
            challenge.contains(reason),
            "{what}: www-authenticate {challenge:?}"
        );
    }
    // A token signed with another key.
    let forged = {
        let good = token_with("alice", json!({}));
        let (head, _) = good.rsplit_once('.').unwrap_or_default();
        format!("Bearer {head}.c2lnbmF0dXJl")
    };
    let (status, challenge, _) = get(&stack, &path, Some(&forged)).await?;
    ensure!(
        status == 401 && challenge.contains("signature"),
        "forged: {status} {challenge}"
    );
    // HS256: the issuer publishes RSA keys only, so an HMAC-signed token is refused
    // whatever its secret (API Gateway takes the algorithms of the issuer's keys).
    let hs256 = {
        use base64::Engine as _;
        use hmac::{KeyInit, Mac};
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let good = token_with("alice", json!({}));
        let payload = good.split('.').nth(1).unwrap_or_default();
        let signing_input = format!("{}.{payload}", b64(br#"{"alg":"HS256","typ":"JWT"}"#));
        let mut mac =
            hmac::Hmac::<sha2::Sha256>::new_from_slice(b"local-jwt-secret-not-for-production")
                .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
        mac.update(signing_input.as_bytes());
        format!(
            "Bearer {signing_input}.{}",
            b64(&mac.finalize().into_bytes())
        )
    };
    let (status, _, body) = get(&stack, &path, Some(&hs256)).await?;
    ensure!(status == 401, "HS256: {status} {body}");

    // Accepted: with or without "Bearer ", `aud` as a list, or `client_id` when there is
    // no `aud` (Cognito access tokens).
    let accepted = [
        bearer("alice"),
        token_with("alice", json!({})),
        format!(
            "Bearer {}",
            token_with("alice", json!({"aud": ["x", JWT_AUDIENCE]}))
        ),
        format!(
            "Bearer {}",
            token_with("alice", json!({"aud": null, "client_id": JWT_AUDIENCE}))
        ),
    ];
    for auth in &accepted {
        let (status, _, body) = get(&stack, &path, Some(auth)).await?;
        ensure!(
            status == 200 && body["score"] == 10,
            "{auth}: {status} {body}"
        );
    }

    // The README's one-liner: the events API's local token endpoint, the token alone.
    let minted = stack
        .http
        .get(format!(
            "{}/demo/token?player=alice&format=jwt",
            stack.events
        ))
        .send()
        .await?
        .text()
        .await?;
    let (status, _, body) = get(&stack, &path, Some(&format!("Bearer {minted}"))).await?;
    ensure!(
        status == 200,
        "the local token endpoint's token: {status} {body}"
    );

    // The token's subject is the caller: a live neighbourhood is its owner's only.
    let live = format!("/leaderboards/{lb}/players/alice/live");
    let (status, _, body) = get(&stack, &live, Some(&bearer("alice"))).await?;
    ensure!(status == 200, "own view: {status} {body}");
    let (status, _, body) = get(&stack, &live, Some(&bearer("mallory"))).await?;
    ensure!(
        status == 403 && body["error"]["code"] == "not_your_view",
        "another's view: {status} {body}"
    );
    // Server-only routes take no player token in place of the server credential.
    let resp = stack
        .http
        .post(format!(
            "{}/leaderboards/{lb}/players/alice/score",
            stack.api
        ))
        .header("authorization", bearer("alice"))
        .json(&json!({"new_score": 99, "match_id": "m2"}))
        .send()
        .await?;
    ensure!(
        resp.status() == 401,
        "score with a player token: {}",
        resp.status()
    );
    Ok(())
}

#[tokio::test]
async fn undeclared_methods_get_json_with_the_methods_allowed() -> Result<()> {
    let (stack, lb) = Stack::with_board("methods").await?;
    for method in ["TRACE", "OPTIONS", "PUT", "HEAD", "BREW"] {
        let resp = stack
            .http
            .request(
                reqwest::Method::from_bytes(method.as_bytes())?,
                format!("{}/leaderboards/{lb}/top", stack.api),
            )
            .header("authorization", bearer("alice"))
            .send()
            .await?;
        let status = resp.status().as_u16();
        let allow = resp
            .headers()
            .get("allow")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let kind = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = resp.text().await?;
        ensure!(
            status == 405 && allow == "GET",
            "{method}: {status} allow {allow:?}"
        );
        ensure!(kind == "application/json", "{method}: {kind} {text}");
        if method != "HEAD" {
            let body: Value = serde_json::from_str(&text)?;
            ensure!(
                body["error"]["code"] == "method_not_allowed",
                "{method}: {body}"
            );
        }
    }
    // Off every route: 404, JSON.
    let (status, _, body) = get(&stack, "/nowhere", Some(&bearer("alice"))).await?;
    ensure!(
        status == 404 && body["error"]["code"] == "route_not_found",
        "{status} {body}"
    );
    Ok(())
}

/// A body openapi.yaml refuses is refused and changes nothing: a null (never read as a
/// default), a field no schema declares (`additionalProperties: false`: a misspelt
/// `event_ts` must not become "now"), a value past a declared bound, and the rules the
/// document states in words (a season that ends before it starts). A region the family
/// does not have is well-formed, so the family's settings refuse it with a 422.
#[tokio::test]
async fn a_body_the_document_refuses_is_refused_and_changes_nothing() -> Result<()> {
    let (stack, lb) = Stack::with_board("refused").await?;
    stack.post_score(&lb, "alice", "m1", 10).await?;
    let score = format!("/leaderboards/{lb}/players/alice/score");
    let game = format!("g{}", &lb[lb.len().saturating_sub(20)..]).replace([':', '.'], "-");
    let family = |season: Value| {
        json!({"game": game, "mode": "m", "regions": ["EU"], "periods": ["SEASON"],
               "season": season})
    };
    let season = |start: i64, end: i64| json!({"id": "s1", "start": start, "end": end});
    // Valid JSON of another shape than the route's is a 400 `invalid_request` naming the
    // field (an unknown field was once called "not valid JSON").
    let cases: Vec<(Method, String, Value, &str)> = vec![
        (
            Method::POST,
            "/admin/rebuild".into(),
            json!({"leaderboard_id": lb, "budget_ms": null}),
            "budget_ms",
        ),
        (
            Method::POST,
            "/admin/seal".into(),
            json!({"leaderboard_id": null}),
            "leaderboard_id",
        ),
        (
            Method::POST,
            score.clone(),
            json!({"new_score": 99, "match_id": "m2", "event_ts": null}),
            "event_ts",
        ),
        (
            Method::POST,
            "/admin/rebuild".into(),
            json!({"all": true, "budget_ms": 9_007_199_254_740_992_u64}),
            "budget_ms",
        ),
        (
            Method::POST,
            score.clone(),
            json!({"new_score": 99, "match_id": "m2", "eventTs": "2020-01-01T00:00:00Z"}),
            "eventTs",
        ),
        (
            Method::POST,
            score.clone(),
            json!({"new_score": 99, "match_id": "m2", "event_ts": 253_402_300_800_000_i64}),
            "event_ts",
        ),
        (
            Method::POST,
            "/leaderboards".into(),
            json!({"leaderboard_id": lb, "polcy": "MIN"}),
            "polcy",
        ),
        (
            Method::PATCH,
            format!("/leaderboards/{lb}"),
            json!({"status": "FROZEN", "why": "x"}),
            "why",
        ),
        (
            Method::POST,
            "/admin/rebuild".into(),
            json!({"all": true, "board": lb}),
            "board",
        ),
        (
            Method::DELETE,
            format!("/leaderboards/{lb}/players/alice"),
            json!({"reason": "cheat", "extra": 1}),
            "extra",
        ),
        (
            Method::POST,
            "/families".into(),
            family(season(5, 5)),
            "season",
        ),
        (
            Method::POST,
            "/families".into(),
            family(json!({"id": "s1", "start": 1, "end": 2, "tz": "UTC"})),
            "season.tz",
        ),
        (
            Method::POST,
            "/scores".into(),
            json!({"game": game, "mode": "m", "region": "EU", "player_id": "alice",
                   "match_id": "m3", "score": 5, "extra": true}),
            "extra",
        ),
    ];
    for (method, path, body, field) in cases {
        let (status, reply) = stack
            .call(method.clone(), &path, Some(body.clone()))
            .await?;
        ensure!(
            status == 400
                && reply["error"]["code"] == "invalid_request"
                && reply["error"]["field"] == field,
            "{method} {path} {body}: {status} {reply}"
        );
    }
    let (status, reply) = stack
        .post("/families", family(season(0, i64::MAX >> 20)))
        .await?;
    ensure!(status == 201, "{reply}");
    let (status, reply) = stack
        .post(
            "/scores",
            json!({"game": game, "mode": "m", "region": "NA", "player_id": "alice",
                   "match_id": "m4", "score": 5}),
        )
        .await?;
    ensure!(
        status == 422 && reply["error"]["code"] == "unknown_region",
        "{status} {reply}"
    );
    // Nothing changed: alice still has her one score on an active board.
    let (_, top) = stack.get(&format!("/leaderboards/{lb}/top")).await?;
    ensure!(
        top["total"] == 1 && top["entries"][0]["score"] == 10,
        "{top}"
    );
    let (_, board) = stack.get(&format!("/leaderboards/{lb}")).await?;
    ensure!(board["status"] == "ACTIVE", "{board}");
    Ok(())
}

/// What the document bounds is a 400 naming the field, what the board's state refuses a
/// 422, and JSON is never `malformed_json`: a number past a double is a number (a score
/// that large is out of the board's range; another field refuses it as its type).
#[tokio::test]
async fn numbers_past_a_double_and_rules_past_the_documents_bounds_name_their_field() -> Result<()>
{
    let (stack, lb) = Stack::with_board("bounds").await?;
    stack.post_score(&lb, "alice", "m1", 10).await?;
    let score = format!("/leaderboards/{lb}/players/alice/score");
    let rules =
        |rule: &str| format!(r#"{{"leaderboard_id": "{lb}-rules", "integrity": {{{rule}}}}}"#);
    let score_body =
        |score: &str, more: &str| format!(r#"{{"new_score": {score}, "match_id": "m2"{more}}}"#);
    // (path, body, the error's code, its field)
    let mut cases = vec![
        (
            score.clone(),
            score_body("1e400", ""),
            "score_out_of_range",
            "new_score".to_owned(),
        ),
        (
            score.clone(),
            score_body("\"-1e400\"", ""),
            "score_out_of_range",
            "new_score".to_owned(),
        ),
        (
            score.clone(),
            score_body("5", r#", "event_ts": 1e400"#),
            "invalid_request",
            "event_ts".to_owned(),
        ),
    ];
    for (rule, code) in [
        (r#""max_top_factor": 1.0"#, "invalid_request"),
        (r#""max_top_factor": 1001"#, "invalid_request"),
        (r#""max_top_factor": 1e400"#, "invalid_request"),
        (r#""max_results_per_minute": 2.5"#, "invalid_request"),
        (r#""max_top_factor": 1.015"#, "invalid_integrity"),
    ] {
        let field = format!("integrity.{}", rule.split('"').nth(1).unwrap_or_default());
        cases.push(("/leaderboards".to_owned(), rules(rule), code, field));
    }
    for (path, body, code, field) in cases {
        let status = if code == "invalid_request" { 400 } else { 422 };
        let (got, text) = stack.call_text(Method::POST, &path, Some(&body)).await?;
        let reply: Value = serde_json::from_str(&text)?;
        ensure!(
            got == status && reply["error"]["code"] == code && reply["error"]["field"] == field,
            "{path} {body}: {got} {reply}"
        );
    }
    // Nothing changed: alice's one score stands, and no board was created.
    let (_, top) = stack.get(&format!("/leaderboards/{lb}/top")).await?;
    ensure!(
        top["total"] == 1 && top["entries"][0]["score"] == 10,
        "{top}"
    );
    let (status, _) = stack.get(&format!("/leaderboards/{lb}-rules")).await?;
    ensure!(status == 404, "a refused board was created");
    // Dense ranks a board does not keep: a 422 naming the parameter the read sent.
    let (status, reply) = stack
        .get(&format!("/leaderboards/{lb}/top?rank_mode=dense"))
        .await?;
    ensure!(
        status == 422
            && reply["error"]["code"] == "dense_ranks_not_kept"
            && reply["error"]["field"] == "rank_mode",
        "{status} {reply}"
    );
    Ok(())
}

/// A body past the gateway's limit (413), or framed by a length or chunk size that is no
/// number (400), is refused and the connection closed, as API Gateway does: the rest of
/// the body is never read as further requests (a request smuggled in it gets no answer).
#[tokio::test]
async fn a_body_too_large_is_refused_and_its_connection_closed() -> Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (stack, lb) = Stack::with_board("toolarge").await?;
    let address = stack.api.trim_start_matches("http://").to_owned();
    let smuggled = "GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n".repeat(50);
    // Past the limit (413), and framing that is no number (400): a length with a sign,
    // a `_` or letters, a chunk size that is not hex. Each is answered alone, then closed.
    let mb2 = 2 * 1024 * 1024;
    let cases = [
        (format!("Content-Length: {mb2}\r\n"), None, "413"),
        (
            "Transfer-Encoding: chunked\r\n".to_owned(),
            Some(format!("{mb2:x}\r\n")),
            "413",
        ),
        ("Content-Length: abc\r\n".to_owned(), None, "400"),
        ("Content-Length: +20\r\n".to_owned(), None, "400"),
        ("Content-Length: 2_0\r\n".to_owned(), None, "400"),
        (
            "Transfer-Encoding: chunked\r\n".to_owned(),
            Some("zz\r\n".to_owned()),
            "400",
        ),
    ];
    for (head, chunk, want) in cases {
        let mut conn = tokio::net::TcpStream::connect(&address).await?;
        let request = format!(
            "POST /leaderboards/{lb}/players/p1/score HTTP/1.1\r\nHost: x\r\nx-api-key: {}\r\n{head}\r\n",
            crate::support::API_KEY
        );
        conn.write_all(request.as_bytes()).await?;
        if let Some(chunk) = &chunk {
            conn.write_all(chunk.as_bytes()).await?;
        }
        // The smuggled requests, as far as the server reads before it closes.
        let _ = conn.write_all(smuggled.as_bytes()).await;
        let mut answer = Vec::new();
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            conn.read_to_end(&mut answer),
        )
        .await;
        ensure!(read.is_ok(), "{head}: the connection stayed open");
        let answer = String::from_utf8_lossy(&answer);
        ensure!(
            answer.starts_with(&format!("HTTP/1.1 {want} "))
                && answer.matches("HTTP/1.1 ").count() == 1
                && answer.to_lowercase().contains("connection: close"),
            "{head}: {answer}"
        );
    }
    Ok(())
}
