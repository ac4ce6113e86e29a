//! IAM authentication to ElastiCache (Valkey 7.2 or later, Redis OSS 7 or later): the
//! password is a short-lived token, not a secret kept anywhere. The token is a
//! SigV4-presigned `connect` request for the cache and the user: service `elasticache`,
//! host the cache's name, `ResourceType=ServerlessCache` for a serverless cache, valid 15
//! minutes, without its `http://`. The function's role needs `elasticache:Connect` on the
//! cache and the user (the template's small profile grants it).
//!
//! Every connection subscribes to [`IamAuth`]'s tokens: one to open it, then a fresh one
//! every [`REFRESH`], which the connection sends with `AUTH` before the last expires. That
//! also keeps it past ElastiCache's 12 hours for a connection authenticated once.

use std::pin::Pin;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_sigv4::http_request::{
    SignableBody, SignableRequest, SignatureLocation, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use futures::Stream;
use redis::auth::{BasicAuth, StreamingCredentialsProvider};
use redis::{ErrorKind, RedisError, RedisResult};

/// How long a token is valid (ElastiCache takes at most 15 minutes).
pub const VALID_FOR: Duration = Duration::from_secs(900);
/// How often an open connection authenticates again, well inside [`VALID_FOR`].
pub const REFRESH: Duration = Duration::from_secs(600);

/// Which cache and user the tokens are for, and whose credentials sign them.
#[derive(Clone)]
pub struct IamAuth {
    /// The cache's name (a serverless cache's, or a replication group's id), lowercase.
    pub cache: String,
    /// The ElastiCache user, whose id is its name (`default.iam-user` is the system's own).
    pub user: String,
    pub region: String,
    /// A serverless cache (`ResourceType=ServerlessCache` is signed in).
    pub serverless: bool,
    pub credentials: SharedCredentialsProvider,
}

impl IamAuth {
    /// A token signed at `at` with `creds`: the presigned URL without its scheme.
    pub fn token_at(&self, creds: Credentials, at: SystemTime) -> Result<String, String> {
        // An ElastiCache user id is letters, digits, `-` and `.`: nothing to escape.
        let mut url = format!("http://{}/?Action=connect&User={}", self.cache, self.user);
        if self.serverless {
            url.push_str("&ResourceType=ServerlessCache");
        }
        let mut settings = SigningSettings::default();
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(VALID_FOR);
        let identity = creds.into();
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(&self.region)
            .name("elasticache")
            .time(at)
            .settings(settings)
            .build()
            .map_err(|e| e.to_string())?
            .into();
        let host = [("host", self.cache.as_str())];
        let request = SignableRequest::new("GET", &url, host.into_iter(), SignableBody::Bytes(&[]))
            .map_err(|e| e.to_string())?;
        let (instructions, _) = sign(request, &params)
            .map_err(|e| e.to_string())?
            .into_parts();
        let mut signed = http::Request::get(&url)
            .body(())
            .map_err(|e| e.to_string())?;
        instructions.apply_to_request_http1x(&mut signed);
        Ok(signed.uri().to_string().split_off("http://".len()))
    }

    /// A token signed now with the role's current credentials.
    pub async fn token(&self) -> RedisResult<BasicAuth> {
        let creds = (self.credentials.provide_credentials().await).map_err(|e| {
            refused(
                "no AWS credentials to sign the cache's token",
                e.to_string(),
            )
        })?;
        let token = (self.token_at(creds, SystemTime::now()))
            .map_err(|e| refused("cannot sign the cache's token", e))?;
        Ok(BasicAuth::new(self.user.clone(), token))
    }
}

fn refused(what: &'static str, detail: String) -> RedisError {
    RedisError::from((ErrorKind::AuthenticationFailed, what, detail))
}

impl StreamingCredentialsProvider for IamAuth {
    /// A token now, then a fresh one every [`REFRESH`].
    fn subscribe(&self) -> Pin<Box<dyn Stream<Item = RedisResult<BasicAuth>> + Send + 'static>> {
        let auth = self.clone();
        Box::pin(futures::stream::unfold(true, move |first| {
            let auth = auth.clone();
            async move {
                if !first {
                    tokio::time::sleep(REFRESH).await;
                }
                Some((auth.token().await, false))
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> Credentials {
        Credentials::new("ANOTREAL", "not-a-real-secret", None, None, "test")
    }

    #[test]
    fn a_token_is_the_presigned_connect_request_without_its_scheme() {
        let auth = IamAuth {
            cache: "lb-cache".into(),
            user: "default.iam-user".into(),
            region: "us-east-1".into(),
            serverless: true,
            credentials: SharedCredentialsProvider::new(creds()),
        };
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_795_000_000);
        let token = auth.token_at(creds(), at).unwrap();
        assert!(token.starts_with(
            "lb-cache/?Action=connect&User=default.iam-user&ResourceType=ServerlessCache&"
        ));
        for part in [
            "X-Amz-Algorithm=AWS4-HMAC-SHA256",
            "X-Amz-Credential=ANOTREAL%2F20261118%2Fus-east-1%2Felasticache%2Faws4_request",
            "X-Amz-Date=20261118T",
            "X-Amz-Expires=900",
            "X-Amz-SignedHeaders=host",
            "X-Amz-Signature=",
        ] {
            assert!(token.contains(part), "{part} in {token}");
        }
        assert_eq!(token, auth.token_at(creds(), at).unwrap());
    }
}
