//! TLS for the HTTP examples and tests: rustls (with the `ring` provider) through
//! `futures-rustls`, and a self-signed certificate made at start-up with `rcgen`.

use std::sync::Arc;

use futures_rustls::rustls::{self, pki_types};
use pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// The protocols offered by ALPN, best first.
pub const ALPN: [&[u8]; 2] = [b"h2", b"http/1.1"];

/// A self-signed certificate for `names` and its private key.
pub fn self_signed(
    names: &[&str],
) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), rcgen::Error> {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let certified = rcgen::generate_simple_self_signed(names)?;
    let key = PrivatePkcs8KeyDer::from(certified.signing_key.serialize_der());
    Ok((certified.cert.der().clone(), key.into()))
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server configuration presenting `cert`, offering HTTP/2 and HTTP/1.1.
pub fn server_config(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, rustls::Error> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)?;
    config.alpn_protocols = ALPN.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}

/// A client configuration trusting only `cert`, asking for `alpn`.
pub fn client_config(
    cert: CertificateDer<'static>,
    alpn: &[&[u8]],
) -> Result<Arc<rustls::ClientConfig>, rustls::Error> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert)?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(Arc::new(config))
}
