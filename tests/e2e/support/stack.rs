//! The whole local stack of a test's own.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context as _, Result};
use tokio::io::{AsyncBufReadExt, BufReader};

use super::*;

/// The local stack (`infra/local/stack.py`): API Gateway shim, the functions as real
/// processes, the stream mapping and the social-graph stand-in, on free ports, with the
/// test's own table and key prefix. Stopped (with its functions) on drop.
pub struct Stack {
    child: tokio::process::Child,
    pub api: String,
    pub social: String,
    /// The events API: its HTTP endpoint (publish, demo page, local tokens) and its
    /// real-time (WebSocket) endpoint.
    pub events: String,
    pub realtime: String,
    /// The operator console's static files and config (the local stand-in of CloudFront).
    pub console: String,
    pub http: reqwest::Client,
    /// The stack's own table and key prefix, to inspect its state.
    pub table: String,
    pub prefix: String,
    /// Where the stack and its functions log.
    pub run_dir: PathBuf,
}

/// How to start a [`Stack`].
#[derive(Default)]
pub struct StackOptions<'a> {
    /// Another DynamoDB endpoint than the shared one (a test's own).
    pub dynamodb_url: Option<String>,
    /// Environment for the stack and its functions.
    pub env: &'a [(&'a str, &'a str)],
    /// Run `rate()` schedules (the rebuild sweep) this often, in seconds.
    pub schedule_every: Option<f64>,
    /// Processes per function (default 1).
    pub workers: Option<u32>,
    /// Seconds an API request may wait for a free process before a 503 `throttled`
    /// (default: no bound).
    pub max_queue_wait: Option<f64>,
    /// The table and key prefix of an earlier stack, to start again where it stopped.
    pub same_as: Option<(&'a str, &'a str)>,
    /// Template parameters' values (`--parameter NAME=VALUE`), the webhooks' so far.
    pub parameters: &'a [(&'a str, &'a str)],
}

pub const API_KEY: &str = "e2e-key";
/// The stack's players' identity provider (`infra/local/idp.py`): the issuer and the
/// audience the gateway requires. Its RSA key is the run's (`LB_TEST_JWT_KEY`, a PEM file
/// `infra/test.sh` makes, whose key id is `LB_TEST_JWT_KID`).
pub const JWT_ISSUER: &str = "https://idp.e2e.local";
pub const JWT_AUDIENCE: &str = "e2e-game";

/// The run's signing key: its PEM file and key id.
pub fn jwt_key() -> (String, String) {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set (infra/test.sh sets it)"))
    };
    (var("LB_TEST_JWT_KEY"), var("LB_TEST_JWT_KID"))
}

/// A player's token as the stack's identity provider issues it (RS256 under the run's
/// key, [`jwt_key`]), with `claims` added or replaced (e.g. a foreign `aud`, a past `exp`;
/// a null removes the claim).
pub fn token_with(player: &str, claims: serde_json::Value) -> String {
    use std::sync::OnceLock;
    static KEY: OnceLock<(jsonwebtoken::EncodingKey, String)> = OnceLock::new();
    let (key, kid) = KEY.get_or_init(|| {
        let (path, kid) = jwt_key();
        let pem = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path}: {e}"));
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(&pem)
            .unwrap_or_else(|e| panic!("{path} is no RSA key: {e}"));
        (key, kid)
    });
    let now = chrono::Utc::now().timestamp();
    let mut body = serde_json::json!({
        "sub": player, "iss": JWT_ISSUER, "aud": JWT_AUDIENCE, "iat": now, "exp": now + 3600,
    });
    if let (Some(b), Some(extra)) = (body.as_object_mut(), claims.as_object()) {
        for (k, v) in extra {
            match v.is_null() {
                true => b.remove(k),
                false => b.insert(k.clone(), v.clone()),
            };
        }
    }
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::RS256);
    header.kid = Some(kid.clone());
    jsonwebtoken::encode(&header, &body, key).unwrap_or_else(|e| panic!("sign a token: {e}"))
}

/// `Authorization` for `player`: a bearer token of the stack's identity provider.
pub fn bearer(player: &str) -> String {
    format!("Bearer {}", token_with(player, serde_json::json!({})))
}

/// A reader of its own for each request the helpers send without naming a player (as
/// many game clients, each under its own per-player read limit).
fn any_reader() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    bearer(&format!("reader-{}", NEXT.fetch_add(1, Ordering::Relaxed)))
}

impl Stack {
    pub async fn start(redis_url: &str) -> Result<Self> {
        Self::start_with(redis_url, &[]).await
    }

    /// A stack over the run's redis-server with one new BEST board named after `tag`.
    pub async fn with_board(tag: &str) -> Result<(Self, String)> {
        let stack = Self::start(&super::redis_url()).await?;
        let lb = stack.create_board(tag).await?;
        Ok((stack, lb))
    }

    /// Like [`Stack::start`], with extra environment for the stack and its functions.
    pub async fn start_with(redis_url: &str, env: &[(&str, &str)]) -> Result<Self> {
        Self::launch(
            redis_url,
            StackOptions {
                env,
                ..Default::default()
            },
        )
        .await
    }

    pub async fn launch(redis_url: &str, opts: StackOptions<'_>) -> Result<Self> {
        let root = root();
        let (table, prefix) = match opts.same_as {
            Some((table, prefix)) => (table.to_owned(), prefix.to_owned()),
            None => (unique("t"), format!("{}:", unique("k"))),
        };
        let schedule = opts
            .schedule_every
            .map(|s| s.to_string())
            .unwrap_or_else(|| "3600".into());
        let bin_dir = std::env::var("LB_TEST_BIN_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| root.join("target/debug"));
        let run_dir = root.join("target/e2e-run").join(unique("stack"));
        std::fs::create_dir_all(&run_dir)?;
        let mut child = tokio::process::Command::new(python())
            .arg(root.join("infra/local/stack.py"))
            .args(["--port", "0", "--social-port", "0"])
            .args([
                "--events-port",
                "0",
                "--events-ws-port",
                "0",
                "--console-port",
                "0",
            ])
            .arg("--workers")
            .arg(opts.workers.unwrap_or(1).to_string())
            .args(["--poll-interval", "0.1"])
            .args(opts.max_queue_wait.map(|s| format!("--max-queue-wait={s}")))
            .args((opts.parameters.iter()).map(|(k, v)| format!("--parameter={k}={v}")))
            // Every reply a test gets has passed openapi-core against openapi.yaml.
            .arg("--check-openapi")
            .arg("--table")
            .arg(&table)
            .arg("--key-prefix")
            .arg(&prefix)
            .arg("--schedule-every")
            .arg(schedule)
            .arg("--dynamodb-url")
            .arg(opts.dynamodb_url.unwrap_or_else(dynamodb_url))
            .arg("--redis-url")
            .arg(redis_url)
            .arg("--api-key")
            .arg(API_KEY)
            .args(["--jwt-key", &jwt_key().0, "--jwt-issuer", JWT_ISSUER])
            .args(["--jwt-audience", JWT_AUDIENCE])
            .arg("--bin-dir")
            .arg(bin_dir)
            .arg("--run-dir")
            .arg(&run_dir)
            .envs(opts.env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(run_dir.join("stack.err"))?)
            .kill_on_drop(true)
            .spawn()
            .context("start infra/local/stack.py")?;
        let stdout = child.stdout.take().context("stack stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(rest) = line.strip_prefix("READY ") {
                    return Ok::<_, anyhow::Error>(Some(rest.to_owned()));
                }
            }
            Ok(None)
        })
        .await
        .context("stack did not get ready in 60 s")??
        .with_context(|| {
            format!(
                "stack exited early; see {}",
                run_dir.join("stack.err").display()
            )
        })?;
        let field = |name: &str| {
            ready
                .split_whitespace()
                .find_map(|kv| kv.strip_prefix(&format!("{name}=")).map(str::to_owned))
                .with_context(|| format!("READY line without {name}: {ready}"))
        };
        Ok(Self {
            api: field("api")?,
            social: field("social")?,
            events: field("events")?,
            realtime: field("realtime")?,
            console: field("console")?,
            child,
            http: leaderboard::adapters::tls::http().build()?,
            table,
            prefix,
            run_dir,
        })
    }

    /// A request to the API: server-only routes get the API key, player routes a token
    /// of a reader of the request's own.
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, serde_json::Value)> {
        let body = body.map(|b| b.to_string());
        let (status, text) = self.call_text(method, path, body.as_deref()).await?;
        let json = serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?;
        Ok((status, json))
    }

    /// [`Stack::call`] with the body sent and answered as text, exactly as written (a
    /// number's digits as the client wrote them).
    pub async fn call_text(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<&str>,
    ) -> Result<(u16, String)> {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.api))
            .header("x-api-key", API_KEY)
            .header("authorization", any_reader());
        if let Some(b) = body {
            req = req
                .header("content-type", "application/json")
                .body(b.to_owned());
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        Ok((status, resp.text().await?))
    }

    /// A GET as `player` (a token with that subject); returns the response headers too.
    pub async fn get_as(
        &self,
        path: &str,
        player: &str,
    ) -> Result<(u16, reqwest::header::HeaderMap, serde_json::Value)> {
        self.get_with(path, &[("authorization", &bearer(player))])
            .await
    }

    /// A POST as `player` (a token with that subject, no API key).
    pub async fn post_as(
        &self,
        path: &str,
        player: &str,
        body: serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        let resp = (self.http.post(format!("{}{path}", self.api)))
            .header("authorization", bearer(player))
            .json(&body)
            .send()
            .await?;
        let status = resp.status().as_u16();
        let text = resp.text().await?;
        let json = serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?;
        Ok((status, json))
    }

    /// A GET with exactly these headers (none added); returns the response headers too.
    pub async fn get_with(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Result<(u16, reqwest::header::HeaderMap, serde_json::Value)> {
        let mut req = self.http.get(format!("{}{path}", self.api));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = req.send().await?;
        let status = resp.status().as_u16();
        let head = resp.headers().clone();
        let text = resp.text().await?;
        let json = serde_json::from_str(&text).with_context(|| format!("not JSON: {text}"))?;
        Ok((status, head, json))
    }

    /// A new BEST board (201 asserted); its id starts with `tag`.
    pub async fn create_board(&self, tag: &str) -> Result<String> {
        let lb = unique(tag);
        let (status, body) = self
            .post(
                "/leaderboards",
                serde_json::json!({"leaderboard_id": lb, "policy": "BEST"}),
            )
            .await?;
        assert_eq!(status, 201, "{body}");
        Ok(lb)
    }

    /// Runs the seal as its schedule does (`POST /admin/seal` with no board) until a run
    /// answers 200: every window due is sealed (a 202 is a run out of time, to go on).
    pub async fn seal_all(&self) -> Result<()> {
        loop {
            let (status, report) = self.post("/admin/seal", serde_json::json!({})).await?;
            anyhow::ensure!(status == 200 || status == 202, "{status} {report}");
            if status == 200 {
                return Ok(());
            }
        }
    }

    /// Erases `player` everywhere (`DELETE /players/{p}`, 200 asserted); returns the reply.
    pub async fn erase_player(&self, player: &str) -> Result<serde_json::Value> {
        let reason = serde_json::json!({"reason": "GDPR request"});
        let path = format!("/players/{player}");
        let (status, erased) = self
            .call(reqwest::Method::DELETE, &path, Some(reason))
            .await?;
        assert_eq!(status, 200, "{erased}");
        Ok(erased)
    }

    /// Posts one match result (200 asserted) and returns the receipt.
    pub async fn post_score(
        &self,
        lb: &str,
        p: &str,
        m: &str,
        s: i64,
    ) -> Result<serde_json::Value> {
        let (status, body) = self
            .post(
                &format!("/leaderboards/{lb}/players/{p}/score"),
                serde_json::json!({"new_score": s, "match_id": m}),
            )
            .await?;
        assert_eq!(status, 200, "{body}");
        Ok(body)
    }

    pub async fn get(&self, path: &str) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::GET, path, None).await
    }

    pub async fn post(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn patch(
        &self,
        path: &str,
        body: serde_json::Value,
    ) -> Result<(u16, serde_json::Value)> {
        self.call(reqwest::Method::PATCH, path, Some(body)).await
    }

    /// Follows `next_cursor` from `path` (which already has a query string) to the end,
    /// collecting `field` of every row of the `rows` array.
    pub async fn walk(&self, path: &str, rows: &str, field: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let q = cursor.map(|c| format!("&cursor={c}")).unwrap_or_default();
            let (status, page) = self.get(&format!("{path}{q}")).await?;
            anyhow::ensure!(status == 200, "GET {path}: {status} {page}");
            for row in page[rows].as_array().into_iter().flatten() {
                out.push(row[field].as_str().unwrap_or_default().to_owned());
            }
            cursor = page["next_cursor"].as_str().map(str::to_owned);
            if cursor.is_none() {
                return Ok(out);
            }
        }
    }

    /// How many lines of the stack's or a function's log (`stack.err`,
    /// `RepairFunction.log`, ...) contain `text`.
    pub fn log_lines(&self, file: &str, text: &str) -> usize {
        std::fs::read_to_string(self.run_dir.join(file))
            .map(|log| log.lines().filter(|l| l.contains(text)).count())
            .unwrap_or(0)
    }

    /// Stream records the projector has taken so far (applied, stale, skipped or
    /// poison), from its log.
    pub fn projected_records(&self) -> u64 {
        let log =
            std::fs::read_to_string(self.run_dir.join("ProjectorFunction.log")).unwrap_or_default();
        log.lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|v| v["fields"]["message"] == "batch projected")
            .map(|v| {
                ["applied", "stale", "skipped", "poison"]
                    .iter()
                    .map(|k| v["fields"][k].as_u64().unwrap_or(0))
                    .sum::<u64>()
            })
            .sum()
    }

    /// The adapters over this stack's own table and keys, to compare its state.
    pub async fn inspect(&self, redis_url: &str, dynamodb_url: &str) -> TestEnv {
        TestEnv::attach(redis_url, dynamodb_url, &self.table, &self.prefix).await
    }

    /// Sets a player's friends in the social-graph stand-in.
    pub async fn set_friends(&self, p: &str, friends: &[&str]) -> Result<()> {
        let resp = self
            .http
            .put(format!("{}/players/{p}/friends", self.social))
            .json(&friends)
            .send()
            .await?;
        anyhow::ensure!(resp.status().is_success(), "PUT friends: {}", resp.status());
        Ok(())
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SIGTERM lets the stack stop its function processes; kill_on_drop is the backstop.
        if let Some(pid) = self.child.id() {
            let _ = std::process::Command::new("kill")
                .arg("-TERM")
                .arg(pid.to_string())
                .status();
        }
    }
}
