//! Opaque, tamper-evident paging cursors: a JSON payload and its HMAC-SHA256 tag, both
//! base64url. A cursor altered, forged, or issued for another read is refused.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::Sha256;

use crate::error::DomainError;

type HmacSha256 = Hmac<Sha256>;

/// Signs and checks cursors with one secret (`CURSOR_SECRET`).
#[derive(Clone)]
pub struct CursorSigner {
    key: Vec<u8>,
}

impl CursorSigner {
    pub fn new(secret: &str) -> Self {
        Self {
            key: secret.as_bytes().to_vec(),
        }
    }

    fn mac(&self, scope: &str, payload: &[u8]) -> HmacSha256 {
        // Any key length is accepted by HMAC; this cannot fail.
        let mut mac = HmacSha256::new_from_slice(&self.key).unwrap_or_else(|_| unreachable!());
        mac.update(scope.as_bytes());
        mac.update(b"\n");
        mac.update(payload);
        mac
    }

    /// A cursor for `value`, valid only for reads that name the same `scope`.
    pub fn sign<T: Serialize>(&self, scope: &str, value: &T) -> String {
        let payload = serde_json::to_vec(value).unwrap_or_default();
        let tag = self.mac(scope, &payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(tag)
        )
    }

    /// The value inside `cursor`, if this signer issued it for `scope`.
    pub fn verify<T: DeserializeOwned>(&self, scope: &str, cursor: &str) -> Result<T, DomainError> {
        let (payload, tag) = cursor.split_once('.').ok_or(DomainError::InvalidCursor)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| DomainError::InvalidCursor)?;
        let tag = URL_SAFE_NO_PAD
            .decode(tag)
            .map_err(|_| DomainError::InvalidCursor)?;
        self.mac(scope, &payload)
            .verify_slice(&tag)
            .map_err(|_| DomainError::InvalidCursor)?;
        serde_json::from_slice(&payload).map_err(|_| DomainError::InvalidCursor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_verifies_only_unaltered_and_for_its_scope() {
        let signer = CursorSigner::new("secret");
        let cursor = signer.sign("board-a", &(7_i64, "m".to_owned()));
        let back: (i64, String) = signer.verify("board-a", &cursor).unwrap();
        assert_eq!(back, (7, "m".into()));
        assert!(signer.verify::<(i64, String)>("board-b", &cursor).is_err());
        assert!(
            CursorSigner::new("other")
                .verify::<(i64, String)>("board-a", &cursor)
                .is_err()
        );
        let (payload, tag) = cursor.split_once('.').unwrap();
        let forged = format!("{}.{tag}", URL_SAFE_NO_PAD.encode(b"[8,\"m\"]"));
        assert!(signer.verify::<(i64, String)>("board-a", &forged).is_err());
        assert!(signer.verify::<(i64, String)>("board-a", payload).is_err());
        assert!(
            signer
                .verify::<(i64, String)>("board-a", "!!!.???")
                .is_err()
        );
    }
}
