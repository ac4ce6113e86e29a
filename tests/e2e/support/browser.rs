//! One page in a real headless Chromium (from apt), driven over the DevTools protocol:
//! the demo page's and the operator console's browser tests.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

/// One page in a headless Chromium, over the DevTools protocol (one flat session).
pub struct Browser {
    _child: tokio::process::Child,
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    session: String,
    next: u64,
}

impl Browser {
    pub async fn open(url: &str, profile: &std::path::Path) -> Result<Self> {
        let chromium = std::env::var("LB_TEST_CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let mut child = tokio::process::Command::new(&chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1280,860",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg("about:blank")
            .stderr(Stdio::piped())
            .stdout(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("start {chromium} (infra/test.sh installs it from apt)"))?;
        let mut lines = BufReader::new(child.stderr.take().context("stderr")?).lines();
        let endpoint = tokio::time::timeout(Duration::from_secs(30), async {
            while let Some(line) = lines.next_line().await? {
                if let Some(ws) = line.strip_prefix("DevTools listening on ") {
                    return Ok::<_, anyhow::Error>(ws.trim().to_owned());
                }
            }
            bail!("chromium exited before listening")
        })
        .await
        .context("chromium did not start in 30 s")??;
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (ws, _) = tokio_tungstenite::connect_async(endpoint.as_str()).await?;
        let mut me = Self {
            _child: child,
            ws,
            session: String::new(),
            next: 0,
        };
        let target = me.call("Target.createTarget", json!({"url": url})).await?;
        let attached = me
            .call(
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await?;
        me.session = attached["sessionId"]
            .as_str()
            .context("no session")?
            .to_owned();
        Ok(me)
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
        self.next += 1;
        let id = self.next;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if !self.session.is_empty() {
            msg["sessionId"] = json!(self.session);
        }
        self.ws.send(Message::text(msg.to_string())).await?;
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(10), self.ws.next())
                .await
                .context("DevTools did not answer")?
                .context("DevTools closed")??;
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(&text)?;
            if v["id"] == id {
                if let Some(e) = v.get("error") {
                    bail!("{method}: {e}");
                }
                return Ok(v["result"].clone());
            }
        }
    }

    /// The value of a JavaScript expression in the page.
    pub async fn eval(&mut self, expr: &str) -> Result<Value> {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true}),
            )
            .await?;
        Ok(r["result"]["value"].clone())
    }

    /// Polls `expr` every 20 ms until it equals `want`; the time it took.
    pub async fn until(&mut self, expr: &str, want: Value, wait: Duration) -> Result<Duration> {
        let start = Instant::now();
        loop {
            let got = self.eval(expr).await?;
            if got == want {
                return Ok(start.elapsed());
            }
            if start.elapsed() > wait {
                bail!("{expr} is {got}, not {want}, after {wait:?}");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A PNG of the page as it shows now.
    pub async fn screenshot(&mut self) -> Result<Vec<u8>> {
        let shot = self
            .call("Page.captureScreenshot", json!({"format": "png"}))
            .await?;
        let png = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or(""))?;
        anyhow::ensure!(png.starts_with(b"\x89PNG"), "not a PNG");
        Ok(png)
    }

    /// Goes to `url` (a hash change keeps the page loaded).
    pub async fn goto(&mut self, url: &str) -> Result<()> {
        self.eval(&format!("location.href = {}; true", json!(url)))
            .await?;
        Ok(())
    }

    /// Types `value` into the input, select or text area `selector` names, as a person
    /// would leave it: the value set, then `input` and `change`.
    pub async fn fill(&mut self, selector: &str, value: &str) -> Result<()> {
        let done = self
            .eval(&format!(
                "(el => {{ if (!el) return false; el.value = {v}; \
                 el.dispatchEvent(new Event('input', {{bubbles: true}})); \
                 el.dispatchEvent(new Event('change', {{bubbles: true}})); return true; }})\
                 (document.querySelector({s}))",
                v = json!(value),
                s = json!(selector)
            ))
            .await?;
        anyhow::ensure!(done == json!(true), "nothing to fill at {selector}");
        Ok(())
    }

    /// Clicks the element `selector` names.
    pub async fn click(&mut self, selector: &str) -> Result<()> {
        let done = self
            .eval(&format!(
                "(el => el ? (el.click(), true) : false)(document.querySelector({}))",
                json!(selector)
            ))
            .await?;
        anyhow::ensure!(done == json!(true), "nothing to click at {selector}");
        Ok(())
    }

    /// The text of the element `selector` names (null when there is none).
    pub async fn text(&mut self, selector: &str) -> Result<Value> {
        self.eval(&format!(
            "document.querySelector({})?.textContent ?? null",
            json!(selector)
        ))
        .await
    }

    /// Waits until the element `selector` names shows text containing `part`; its text.
    pub async fn until_text(
        &mut self,
        selector: &str,
        part: &str,
        wait: Duration,
    ) -> Result<String> {
        let start = Instant::now();
        loop {
            let got = self.text(selector).await?;
            if let Some(t) = got.as_str().filter(|t| t.contains(part)) {
                return Ok(t.to_owned());
            }
            if start.elapsed() > wait {
                let shown = self.eval("document.body.innerText").await?;
                bail!(
                    "{selector} shows {got}, not {part:?}, after {wait:?}; the page shows:\n{}",
                    shown.as_str().unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Serves `files` (path, content type, bytes) on a loopback port of their own, as a web
/// game's host would: an origin of its own, returned. Other paths answer 404.
pub async fn serve_static(files: Vec<(&'static str, &'static str, Vec<u8>)>) -> Result<String> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let origin = format!("http://{}", listener.local_addr()?);
    let files = std::sync::Arc::new(files);
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let files = files.clone();
            tokio::spawn(async move {
                let mut request = [0u8; 8192];
                let n = conn.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]);
                let path = head.split_whitespace().nth(1).unwrap_or("/");
                let path = path.split('?').next().unwrap_or("/");
                let found = files.iter().find(|(p, _, _)| *p == path);
                let (status, ctype, body) = match found {
                    Some((_, ctype, body)) => ("200 OK", *ctype, body.as_slice()),
                    None => ("404 Not Found", "text/plain", b"not found".as_slice()),
                };
                let head = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\
                     connection: close\r\n\r\n",
                    body.len()
                );
                let _ = conn.write_all(head.as_bytes()).await;
                let _ = conn.write_all(body).await;
            });
        }
    });
    Ok(origin)
}
