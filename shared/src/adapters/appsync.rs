//! [`AppSyncEvents`]: the [`Broadcaster`] over an AppSync Events API's HTTP publish
//! endpoint (`POST https://<http domain>/event`, `{channel, events}`), each request
//! signed with SigV4 (service `appsync`) by the function's role.

use std::time::SystemTime;

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use serde::Serialize;

use leaderboard_core::store::{BroadcastError, Broadcaster};

/// The events API's publish endpoint and the role's credentials.
pub struct AppSyncEvents {
    http: reqwest::Client,
    url: String,
    host: String,
    region: String,
    credentials: SharedCredentialsProvider,
}

#[derive(Serialize)]
struct Publish<'a> {
    channel: &'a str,
    events: [&'a str; 1],
}

impl AppSyncEvents {
    /// Publishes to `url` (`https://<http domain>/event`) in `region`.
    pub fn new(
        http: reqwest::Client,
        url: String,
        region: String,
        credentials: SharedCredentialsProvider,
    ) -> Result<Self, BroadcastError> {
        let host = reqwest::Url::parse(&url)
            .ok()
            .and_then(|u| {
                let host = u.host_str()?.to_owned();
                Some(match u.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host,
                })
            })
            .ok_or_else(|| BroadcastError::Signing(format!("not an URL: {url}")))?;
        Ok(Self {
            http,
            url,
            host,
            region,
            credentials,
        })
    }

    fn signed_headers(
        &self,
        body: &[u8],
        creds: aws_credential_types::Credentials,
    ) -> Result<Vec<(String, String)>, BroadcastError> {
        let identity = creds.into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("appsync")
            .time(SystemTime::now())
            .settings(SigningSettings::default())
            .build()
            .map_err(|e| BroadcastError::Signing(e.to_string()))?
            .into();
        let headers = [
            ("content-type", "application/json"),
            ("host", self.host.as_str()),
        ];
        let request = SignableRequest::new(
            "POST",
            &self.url,
            headers.into_iter(),
            SignableBody::Bytes(body),
        )
        .map_err(|e| BroadcastError::Signing(e.to_string()))?;
        let (instructions, _) = sign(request, &params)
            .map_err(|e| BroadcastError::Signing(e.to_string()))?
            .into_parts();
        Ok(instructions
            .headers()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect())
    }
}

impl Broadcaster for AppSyncEvents {
    async fn publish(&self, channel: &str, event: String) -> Result<(), BroadcastError> {
        let body = serde_json::to_vec(&Publish {
            channel,
            events: [&event],
        })
        .map_err(|e| BroadcastError::Signing(e.to_string()))?;
        let creds = self
            .credentials
            .provide_credentials()
            .await
            .map_err(|e| BroadcastError::Signing(e.to_string()))?;
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json");
        for (k, v) in self.signed_headers(&body, creds)? {
            request = request.header(k, v);
        }
        let reply =
            request.body(body).send().await.map_err(|e| {
                BroadcastError::Unreachable(leaderboard_rules::error::error_chain(&e))
            })?;
        let status = reply.status().as_u16();
        let text = reply.text().await.unwrap_or_default();
        // The API answers 200 with the events it could not take listed under `failed`.
        let failed = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| {
                v.get("failed")
                    .and_then(|f| f.as_array())
                    .map(|f| !f.is_empty())
            })
            .unwrap_or(false);
        match (status, failed) {
            (200..=299, false) => Ok(()),
            _ => Err(BroadcastError::Refused { status, body: text }),
        }
    }
}
