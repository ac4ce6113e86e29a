//! The process's one TLS crypto provider: ring. The Redis client, reqwest and the AWS
//! SDK's HTTPS client (see `wiring::aws_defaults`) all build their TLS settings from it;
//! no second crypto library (aws-lc-rs) is linked, which keeps each function small.

/// Installs ring as the process-default provider, once. Call before building a TLS
/// client; calling again is free.
pub fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when another provider was installed first: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}
