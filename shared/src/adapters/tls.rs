//! The process's one TLS crypto provider: ring. The Redis client and reqwest build their
//! TLS settings from the process default this installs; the AWS SDK's HTTPS client is
//! given ring explicitly (`wiring::aws_defaults`). No second crypto library (aws-lc-rs)
//! is linked, which keeps each function small.

/// Installs ring as the process-default provider, once. Call before building a TLS
/// client; calling again is free.
pub(crate) fn install_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // Err only when another provider was installed first: that one serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder with the provider installed (reqwest is built without one
/// of its own and would panic building a client otherwise): every HTTP client here
/// starts from this.
pub fn http() -> reqwest::ClientBuilder {
    install_provider();
    reqwest::Client::builder()
}
