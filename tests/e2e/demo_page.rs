//! The live demo page the local stack serves, in a real headless Chromium (from apt),
//! driven over the DevTools protocol: a posted score shows on the page within a second.

use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio_tungstenite::tungstenite::Message;

use crate::support::*;

/// One page in a headless Chromium, over the DevTools protocol (one flat session).
struct Browser {
    _child: tokio::process::Child,
    ws: tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    session: String,
    next: u64,
}

impl Browser {
    async fn open(url: &str, profile: &std::path::Path) -> Result<Self> {
        let chromium = std::env::var("LB_TEST_CHROMIUM").unwrap_or_else(|_| "chromium".into());
        let mut child = tokio::process::Command::new(&chromium)
            .args([
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--remote-debugging-port=0",
                "--window-size=1000,640",
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

    async fn call(&mut self, method: &str, params: Value) -> Result<Value> {
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
    async fn eval(&mut self, expr: &str) -> Result<Value> {
        let r = self
            .call(
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true}),
            )
            .await?;
        Ok(r["result"]["value"].clone())
    }

    /// Polls `expr` every 20 ms until it equals `want`; the time it took.
    async fn until(&mut self, expr: &str, want: Value, wait: Duration) -> Result<Duration> {
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
}

const FIRST_ON_TOP: &str = "document.querySelector('#top tbody tr')?.dataset.player ?? null";
/// What the top row shows of its player: name and country.
const FIRST_NAME: &str = "(r => r && [r.querySelector('.name')?.textContent ?? null, \
     r.querySelector('.cc')?.textContent ?? null])(document.querySelector('#top tbody tr td.player'))";

#[tokio::test]
async fn a_posted_score_shows_on_the_demo_page_within_a_second() -> Result<()> {
    let stack = Stack::start(&redis_url()).await?;
    let lb = stack.create_board("demo").await?;
    let names = [
        "ana", "ben", "cleo", "dev", "eli", "fay", "gus", "hana", "ivan", "jo", "kim", "lou",
    ];
    for (i, p) in names.iter().enumerate() {
        stack.post_score(&lb, p, "m", 900 + 25 * i as i64).await?;
    }
    stack.post_score(&lb, "me", "m", 1_010).await?;
    let profile = stack.run_dir.join("chromium");
    let url = format!("{}/demo/?board={lb}&player=me", stack.events);
    let mut page = Browser::open(&url, &profile).await?;
    page.until(
        "document.getElementById('status').textContent",
        json!("live"),
        Duration::from_secs(20),
    )
    .await?;
    let shown = page
        .eval("document.querySelector('.views').innerText")
        .await?;
    assert_eq!(page.eval(FIRST_ON_TOP).await?, json!("lou"), "{shown}");
    assert_eq!(
        page.eval("document.querySelector('#near tr.me td.rank').textContent")
            .await?,
        json!("8"),
        "{shown}"
    );

    let mut took = Vec::new();
    for (i, p) in ["rookie", "comet", "ace"].iter().enumerate() {
        let sent = Instant::now();
        stack.post_score(&lb, p, "m", 2_000 + i as i64).await?;
        page.until(FIRST_ON_TOP, json!(p), Duration::from_secs(3))
            .await?;
        took.push(sent.elapsed());
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    // The player's own neighbourhood follows too, with what happened to them.
    stack.post_score(&lb, "eli", "m2", 1_020).await?;
    page.until(
        "document.querySelector('#notices li')?.textContent ?? null",
        json!("Overtaken by eli: now #12 (was #11)"),
        Duration::from_secs(3),
    )
    .await?;
    // Names: the top player names themself, then renames; each shows with the next
    // push, and a name is text, never markup.
    assert_eq!(page.eval(FIRST_NAME).await?, json!(["ace", null]));
    for (name, shown) in [
        (
            json!({"display_name": "Ace <b>High</b>", "country": "SE"}),
            json!(["Ace <b>High</b>", "SE"]),
        ),
        (
            json!({"display_name": "Ace", "country": "JP"}),
            json!(["Ace", "JP"]),
        ),
    ] {
        let (status, reply) = stack
            .call(reqwest::Method::PUT, "/players/ace/profile", Some(name))
            .await?;
        assert_eq!(status, 200, "{reply}");
        page.until(FIRST_NAME, shown, Duration::from_secs(3))
            .await?;
    }
    assert_eq!(
        page.eval("document.querySelectorAll('#top b').length")
            .await?,
        json!(0),
        "a name was read as markup"
    );
    println!("demo page: a posted score on the page after {took:?}");
    assert!(
        took.iter().all(|t| *t <= Duration::from_secs(1)),
        "slower than a second: {took:?}"
    );

    let shot = page
        .call("Page.captureScreenshot", json!({"format": "png"}))
        .await?;
    let png =
        base64::engine::general_purpose::STANDARD.decode(shot["data"].as_str().unwrap_or(""))?;
    assert!(png.starts_with(b"\x89PNG"), "not a PNG");
    std::fs::write(stack.run_dir.join("live-demo.png"), &png)?;
    if let Ok(path) = std::env::var("LB_DEMO_SCREENSHOT") {
        std::fs::write(path, &png)?;
    }
    Ok(())
}
