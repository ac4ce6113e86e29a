//! The standard profile's Redis auth token, kept in AWS Secrets Manager
//! (`REDIS_AUTH_SECRET_ARN`) and read once, when the first call opens the connection.

use std::collections::HashMap;
use std::time::Duration;

use leaderboard_core::store::IndexError;

/// An auth token kept in AWS Secrets Manager.
#[derive(Clone)]
pub struct SecretToken {
    pub client: aws_sdk_secretsmanager::Client,
    pub secret_id: String,
}

/// How long reading the auth token may take (once per container).
const SECRET_TIMEOUT: Duration = Duration::from_secs(3);

impl SecretToken {
    /// The secret's value: the `token` field of a JSON secret, or the whole string.
    pub(super) async fn read(&self) -> Result<String, IndexError> {
        let call = self
            .client
            .get_secret_value()
            .secret_id(&self.secret_id)
            .send();
        let out = tokio::time::timeout(SECRET_TIMEOUT, call)
            .await
            .map_err(|_| IndexError::Timeout(SECRET_TIMEOUT))?
            .map_err(|e| {
                IndexError::Config(format!(
                    "cannot read the Redis auth token {}: {}",
                    self.secret_id,
                    aws_sdk_secretsmanager::error::DisplayErrorContext(e)
                ))
            })?;
        let raw = out
            .secret_string()
            .ok_or_else(|| IndexError::Config("the Redis auth secret has no string".to_owned()))?;
        Ok(token_of(raw))
    }
}

/// A JSON secret `{"token": "…"}` (what the SAM template generates) or a plain string.
fn token_of(raw: &str) -> String {
    serde_json::from_str::<HashMap<String, String>>(raw)
        .ok()
        .and_then(|mut m| m.remove("token"))
        .unwrap_or_else(|| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_secret_gives_its_token_field_and_a_plain_one_itself() {
        assert_eq!(token_of(r#"{"token":"abc"}"#), "abc");
        assert_eq!(token_of("plain-token"), "plain-token");
        assert_eq!(token_of(r#"{"other":"x"}"#), r#"{"other":"x"}"#);
    }
}
