//! A webhook receiver: an HTTP endpoint on loopback that records every request it gets
//! (when, its path, its headers, its JSON body) and answers each with the status its
//! rule says (by path and by how many times the same event came before).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request as received: a delivery.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub at: Instant,
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// What it was answered.
    pub status: u16,
}

impl Delivery {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        (self.headers.iter())
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The status for a request to `path` carrying an event seen `before` times already.
pub type Answer = fn(path: &str, before: usize) -> u16;

/// A running receiver; requests keep being recorded while it lives.
pub struct Receiver {
    pub url: String,
    got: Arc<Mutex<Vec<Delivery>>>,
}

impl Receiver {
    pub async fn start(answer: Answer) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}", listener.local_addr()?);
        let got: Arc<Mutex<Vec<Delivery>>> = Arc::default();
        let kept = got.clone();
        tokio::spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let _ = serve(conn, answer, &kept).await;
                });
            }
        });
        Ok(Self { url, got })
    }

    /// Every request so far.
    pub fn received(&self) -> Vec<Delivery> {
        self.got.lock().map(|g| g.clone()).unwrap_or_default()
    }
}

async fn serve(mut conn: TcpStream, answer: Answer, got: &Mutex<Vec<Delivery>>) -> Result<()> {
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 8192];
    let head_end = loop {
        let n = conn.read(&mut chunk).await?;
        anyhow::ensure!(n > 0, "closed before the headers");
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = (lines.next().context("request line")?.split(' ').nth(1))
        .unwrap_or_default()
        .to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = (headers.iter())
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + length {
        let n = conn.read(&mut chunk).await?;
        anyhow::ensure!(n > 0, "closed before the body");
        buf.extend_from_slice(&chunk[..n]);
    }
    let body: Value =
        serde_json::from_slice(&buf[head_end..head_end + length]).unwrap_or(Value::Null);
    let status = {
        let mut got = got.lock().map_err(|_| anyhow::anyhow!("poisoned"))?;
        let before = (got.iter()).filter(|r| r.body["id"] == body["id"]).count();
        let status = answer(&path, before);
        got.push(Delivery {
            at: Instant::now(),
            path,
            headers,
            body,
            status,
        });
        status
    };
    let reply = format!("HTTP/1.1 {status} X\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    conn.write_all(reply.as_bytes()).await?;
    Ok(())
}
