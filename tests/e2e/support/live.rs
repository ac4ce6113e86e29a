//! A game client of the live views: a real WebSocket client of the events API's
//! real-time protocol (AppSync Events'), signed in with a player's token.

use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use base64::Engine as _;
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use super::Stack;

/// One push as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub push: Value,
    /// The push as the events API carried it, digit for digit.
    pub text: String,
}

impl Received {
    pub fn version(&self) -> u64 {
        self.push["version"].as_u64().unwrap_or(0)
    }

    pub fn previous(&self) -> u64 {
        self.push["previous"].as_u64().unwrap_or(0)
    }

    /// The rows' (player, score) in order.
    pub fn rows(&self) -> Vec<(String, i64)> {
        rows(&self.push)
    }
}

/// A view's (player, score) rows in order, from a push or a snapshot.
pub fn rows(view: &Value) -> Vec<(String, i64)> {
    view["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["player_id"].as_str().unwrap_or_default().to_owned(),
                        e["score"].as_i64().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A player's token from the local identity provider (the events API's `/demo/token`).
pub async fn token(stack: &Stack, player: &str) -> Result<String> {
    let url = format!("{}/demo/token?player={player}", stack.events);
    let body: Value = stack.http.get(url).send().await?.json().await?;
    Ok(body["token"].as_str().context("no token")?.to_owned())
}

/// A connection to the events API, acknowledged.
pub struct Subscriber {
    ws: WebSocketStream<MaybeTlsStream<TcpStream>>,
    next_id: u32,
}

/// What a connection attempt got.
pub enum Connected {
    Ok(Box<Subscriber>),
    /// `connection_error` (the errors' JSON).
    Refused(Value),
}

impl Subscriber {
    /// Connects with `token` (none: no auth header) and sends `connection_init`.
    pub async fn connect(stack: &Stack, token: Option<&str>) -> Result<Connected> {
        let mut req = format!("{}/event/realtime", stack.realtime).into_client_request()?;
        let mut protocols = "aws-appsync-event-ws".to_owned();
        if let Some(t) = token {
            let header = json!({"host": "local", "Authorization": t}).to_string();
            let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(header);
            protocols.push_str(&format!(", header-{b64}"));
        }
        req.headers_mut()
            .insert("Sec-WebSocket-Protocol", protocols.parse()?);
        let (ws, _) = tokio_tungstenite::connect_async(req).await?;
        let mut me = Self { ws, next_id: 0 };
        me.send(json!({"type": "connection_init"})).await?;
        let ack = me.control(Duration::from_secs(5)).await?;
        match ack["type"].as_str() {
            Some("connection_ack") => Ok(Connected::Ok(Box::new(me))),
            Some("connection_error") => Ok(Connected::Refused(ack["errors"].clone())),
            _ => bail!("unexpected reply to connection_init: {ack}"),
        }
    }

    /// [`Self::connect`] that must succeed.
    pub async fn signed_in(stack: &Stack, player: &str) -> Result<Self> {
        match Self::connect(stack, Some(&token(stack, player).await?)).await? {
            Connected::Ok(s) => Ok(*s),
            Connected::Refused(e) => bail!("connection refused: {e}"),
        }
    }

    async fn send(&mut self, msg: Value) -> Result<()> {
        self.ws.send(Message::text(msg.to_string())).await?;
        Ok(())
    }

    /// The next message that is not a keep-alive.
    async fn control(&mut self, wait: Duration) -> Result<Value> {
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let msg = tokio::time::timeout(left, self.ws.next())
                .await
                .context("no message in time")?
                .context("connection closed")??;
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(&text)?;
            if v["type"] != "ka" {
                return Ok(v);
            }
        }
    }

    /// Subscribes to `channel`: `Ok(Ok(()))` on `subscribe_success`, `Ok(Err(errors))` on
    /// `subscribe_error`.
    pub async fn subscribe(&mut self, channel: &str) -> Result<Result<(), Value>> {
        self.next_id += 1;
        let id = format!("sub-{}", self.next_id);
        self.send(json!({"type": "subscribe", "id": id, "channel": channel}))
            .await?;
        let reply = self.control(Duration::from_secs(5)).await?;
        if reply["id"] != id.as_str() {
            bail!("reply for another subscription: {reply}");
        }
        match reply["type"].as_str() {
            Some("subscribe_success") => Ok(Ok(())),
            Some("subscribe_error") => Ok(Err(reply["errors"].clone())),
            _ => bail!("unexpected reply to subscribe: {reply}"),
        }
    }

    /// The next push within `wait`, `None` if none came.
    pub async fn next_push(&mut self, wait: Duration) -> Result<Option<Received>> {
        match self.control(wait).await {
            Ok(v) if v["type"] == "data" => {
                let event = v["event"].as_str().context("data without event")?;
                Ok(Some(Received {
                    at: Instant::now(),
                    push: serde_json::from_str(event)?,
                    text: event.to_owned(),
                }))
            }
            Ok(v) => bail!("unexpected message: {v}"),
            Err(e) if e.to_string() == "no message in time" => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Pushes until one satisfies `want` (within `wait` in all); the ones before it too.
    pub async fn push_where(
        &mut self,
        wait: Duration,
        want: impl Fn(&Received) -> bool,
    ) -> Result<(Received, Vec<Received>)> {
        let deadline = Instant::now() + wait;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_push(left).await? {
                Some(p) if want(&p) => return Ok((p, before)),
                Some(p) => before.push(p),
                None => bail!(
                    "no such push in {wait:?}; got {:?}",
                    before.iter().map(|r| &r.push).collect::<Vec<_>>()
                ),
            }
        }
    }
}
